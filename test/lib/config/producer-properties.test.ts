import assert from 'node:assert/strict'
import { availableParallelism } from 'node:os'
import { describe, it } from 'node:test'
import { producerConfigFrom } from '../../../lib/config/producer-properties.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../../lib/copier/copier.js'
import { ErrorCodes } from '../../../lib/errors.js'
import { DEFAULT_COMPRESSION_THREADS } from '../../../lib/producer/config.js'

describe('producer properties: compression threads', () => {
  it('squeeze.compression.threads sets the pool size, 0 compresses on the event loop, default cores - 1', () => {
    assert.equal(DEFAULT_COMPRESSION_THREADS, Math.max(1, availableParallelism() - 1))
    assert.equal(producerConfigFrom({}).compressionThreads, DEFAULT_COMPRESSION_THREADS)
    assert.equal(producerConfigFrom({ 'squeeze.compression.threads': '3' }).compressionThreads, 3)
    assert.equal(producerConfigFrom({ 'squeeze.compression.threads': '0' }).compressionThreads, 0)
    assert.equal(producerConfigFrom({}, undefined, COPIER_PRODUCER_DEFAULTS).compressionThreads, 0, 'the copier compresses inline by default')
    assert.equal(producerConfigFrom({ 'squeeze.compression.threads': '2' }, undefined, COPIER_PRODUCER_DEFAULTS).compressionThreads, 2)
  })

  it('squeeze.compression.inline.seconds puts off the first thread (default 0.1 CPU s, 0: with the producer); a negative or non-number value is a start-up error', () => {
    assert.equal(producerConfigFrom({}).compressionInlineSeconds, 0.1)
    assert.equal(producerConfigFrom({ 'squeeze.compression.inline.seconds': '0' }).compressionInlineSeconds, 0)
    assert.equal(producerConfigFrom({ 'squeeze.compression.inline.seconds': '0.5' }).compressionInlineSeconds, 0.5)
    assert.throws(() => producerConfigFrom({ 'squeeze.compression.inline.seconds': '-1' }), /squeeze\.compression\.inline\.seconds.*0 or more/)
    assert.throws(() => producerConfigFrom({ 'squeeze.compression.inline.seconds': 'soon' }), /squeeze\.compression\.inline\.seconds.*must be a number/)
  })

  it('a negative squeeze.compression.threads is a start-up error', () => {
    assert.throws(() => producerConfigFrom({ 'squeeze.compression.threads': '-1' }), { code: ErrorCodes.CONFIG_INVALID, message: /squeeze\.compression\.threads/ })
  })
})
