import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../lib/errors.js'
import { DEFAULT_PRODUCER_CONFIG, TopicCodecs } from '../../../lib/producer/config.js'

describe('producer config: codec per topic', () => {
  it('gives each topic its own codec if it has one, else the default, with the metric labels to match', () => {
    const codecs = new TopicCodecs({
      codec: { codec: 'zstd', level: 3 },
      topicCodecs: { archive: { codec: 'gzip', level: 9 }, raw: { codec: 'none', level: null } }
    })
    assert.deepEqual(codecs.spec('archive'), { codec: 'gzip', level: 9 })
    assert.deepEqual(codecs.spec('other'), { codec: 'zstd', level: 3 })
    assert.deepEqual(codecs.labels('archive'), { topic: 'archive', codec: 'gzip', level: '9' })
    assert.deepEqual(codecs.labels('raw'), { topic: 'raw', codec: 'none', level: '' })
    assert.equal(codecs.labels('raw'), codecs.labels('raw'), 'worked out once per topic')
  })

  it('rejects a bad codec or level at construction, not at the first batch', () => {
    assert.throws(() => new TopicCodecs({ codec: { codec: 'zstd', level: 99 } }), { code: ErrorCodes.CODEC_LEVEL })
    assert.throws(
      () =>
        new TopicCodecs({ ...DEFAULT_PRODUCER_CONFIG, topicCodecs: { t: { codec: 'brotli' as 'zstd', level: 1 } } }),
      { code: ErrorCodes.CODEC_UNKNOWN }
    )
  })

  it("codec:adaptive: labels carry each batch's level, and a bad range or budget fails at construction", () => {
    const codecs = new TopicCodecs({
      codec: { codec: 'zstd', level: null, adaptive: true },
      adaptiveLevel: { min: 2, max: 9 }
    })
    assert.deepEqual(codecs.spec('t'), { codec: 'zstd', level: null, adaptive: true })
    assert.deepEqual(codecs.labels('t', { codec: 'zstd', level: 4 }), { topic: 't', codec: 'zstd', level: '4' })
    assert.deepEqual(codecs.labels('t', { codec: 'zstd', level: 7 }), { topic: 't', codec: 'zstd', level: '7' })
    assert.equal(
      codecs.labels('t', { codec: 'zstd', level: 4 }),
      codecs.labels('t', { codec: 'zstd', level: 4 }),
      'worked out once per level'
    )
    assert.throws(
      () =>
        new TopicCodecs({
          codec: { codec: 'zstd', level: 3 },
          topicCodecs: { a: { codec: 'gzip', level: null, adaptive: true } },
          adaptiveLevel: { min: 9, max: 3 }
        }),
      /level.min \(9\) is above squeeze.compression.level.max \(3\)/
    )
    assert.throws(
      () =>
        new TopicCodecs({
          codec: { codec: 'lz4', level: null, adaptive: true },
          adaptiveLevel: { cpuBudgetSecondsPerGiB: -1 }
        }),
      { code: ErrorCodes.CONFIG_INVALID }
    )
    assert.throws(() => new TopicCodecs({ codec: { codec: 'snappy', level: null, adaptive: true } }), {
      code: ErrorCodes.CODEC_LEVEL
    })
  })
})
