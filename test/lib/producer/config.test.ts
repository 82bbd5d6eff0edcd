import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../lib/errors.js'
import { DEFAULT_PRODUCER_CONFIG, TopicCodecs } from '../../../lib/producer/config.js'

describe('producer config: codec per topic', () => {
  it('gives each topic its own codec if it has one, else the default, with the metric labels to match', () => {
    const codecs = new TopicCodecs({ codec: { codec: 'zstd', level: 3 }, topicCodecs: { archive: { codec: 'gzip', level: 9 }, raw: { codec: 'none', level: null } } })
    assert.deepEqual(codecs.spec('archive'), { codec: 'gzip', level: 9 })
    assert.deepEqual(codecs.spec('other'), { codec: 'zstd', level: 3 })
    assert.deepEqual(codecs.labels('archive'), { topic: 'archive', codec: 'gzip', level: '9' })
    assert.deepEqual(codecs.labels('raw'), { topic: 'raw', codec: 'none', level: '' })
    assert.equal(codecs.labels('raw'), codecs.labels('raw'), 'worked out once per topic')
  })

  it('rejects a bad codec or level at construction, not at the first batch', () => {
    assert.throws(() => new TopicCodecs({ codec: { codec: 'zstd', level: 99 } }), { code: ErrorCodes.CODEC_LEVEL })
    assert.throws(() => new TopicCodecs({ ...DEFAULT_PRODUCER_CONFIG, topicCodecs: { t: { codec: 'brotli' as 'zstd', level: 1 } } }), { code: ErrorCodes.CODEC_UNKNOWN })
  })
})
