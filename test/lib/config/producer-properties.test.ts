import assert from 'node:assert/strict'
import { availableParallelism } from 'node:os'
import { describe, it } from 'node:test'
import { producerConfigFrom } from '../../../lib/config/producer-properties.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../../lib/copier/copier.js'
import { ErrorCodes } from '../../../lib/errors.js'
import {
  DEFAULT_COMPRESSION_THREADS,
  flushDeadlineMs,
  REQUEST_TIMEOUT_MARGIN_MS,
  shutdownDeadlineMs
} from '../../../lib/producer/config.js'

describe('producer properties: compression threads', () => {
  it('squeeze.compression.threads sets the pool size, 0 compresses on the event loop, default cores - 1 (the copier: 1)', () => {
    assert.equal(DEFAULT_COMPRESSION_THREADS, Math.max(1, availableParallelism() - 1))
    assert.equal(producerConfigFrom({}).compressionThreads, DEFAULT_COMPRESSION_THREADS)
    assert.equal(producerConfigFrom({ 'squeeze.compression.threads': '3' }).compressionThreads, 3)
    assert.equal(producerConfigFrom({ 'squeeze.compression.threads': '0' }).compressionThreads, 0)
    assert.equal(
      producerConfigFrom({}, undefined, COPIER_PRODUCER_DEFAULTS).compressionThreads,
      availableParallelism() > 1 ? 1 : 0,
      'the copier compresses on one thread where it has a second core, else inline'
    )
    assert.equal(
      producerConfigFrom({ 'squeeze.compression.threads': '2' }, undefined, COPIER_PRODUCER_DEFAULTS)
        .compressionThreads,
      2
    )
  })

  it('squeeze.compression.inline.seconds puts off the first thread (default 0.1 CPU s, 0: with the producer); a negative or non-number value is a start-up error', () => {
    assert.equal(producerConfigFrom({}).compressionInlineSeconds, 0.1)
    assert.equal(producerConfigFrom({ 'squeeze.compression.inline.seconds': '0' }).compressionInlineSeconds, 0)
    assert.equal(producerConfigFrom({ 'squeeze.compression.inline.seconds': '0.5' }).compressionInlineSeconds, 0.5)
    assert.throws(
      () => producerConfigFrom({ 'squeeze.compression.inline.seconds': '-1' }),
      /squeeze\.compression\.inline\.seconds.*0 or more/
    )
    assert.throws(
      () => producerConfigFrom({ 'squeeze.compression.inline.seconds': 'soon' }),
      /squeeze\.compression\.inline\.seconds.*must be a number/
    )
  })

  it('a negative squeeze.compression.threads is a start-up error', () => {
    assert.throws(() => producerConfigFrom({ 'squeeze.compression.threads': '-1' }), {
      code: ErrorCodes.CONFIG_INVALID,
      message: /squeeze\.compression\.threads/
    })
  })
})

const RULE = 'delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms'

describe("producer properties: delivery.timeout.ms against linger.ms + request.timeout.ms (Java's rule)", () => {
  it("a delivery.timeout.ms given below the sum is refused with Java's message", () => {
    const settings = { 'linger.ms': '100', 'request.timeout.ms': '30000' }
    const refused = (): unknown => producerConfigFrom({ ...settings, 'delivery.timeout.ms': '30000' })
    assert.throws(refused, (err: Error & { code?: string }) => {
      assert.equal(err.code, ErrorCodes.CONFIG_INVALID)
      assert.equal(err.message, `${RULE} (got 30000 < 30100)`)
      return true
    })
    assert.equal(producerConfigFrom({ ...settings, 'delivery.timeout.ms': '30100' }).deliveryTimeoutMs, 30100)
  })

  it('the default delivery.timeout.ms below the sum is raised to it, with a warning', () => {
    const warnings: string[] = []
    const warn = (message: string): number => warnings.push(message)
    const config = producerConfigFrom({ 'request.timeout.ms': '200000' }, undefined, {}, warn)
    assert.equal(config.deliveryTimeoutMs, 200_100)
    assert.deepEqual(warnings, [`${RULE}. Setting it to 200100.`])
    assert.equal(producerConfigFrom({}, undefined, {}, warn).deliveryTimeoutMs, 120_000)
    assert.equal(warnings.length, 1, 'the defaults keep the rule')
  })

  it("the shutdown deadline covers linger, delivery.timeout.ms, the last request's timeout and a backoff", () => {
    const config = producerConfigFrom({
      'delivery.timeout.ms': '30000',
      'request.timeout.ms': '10000',
      'linger.ms': '100'
    })
    assert.equal(flushDeadlineMs(config), 100 + 30_000 + 10_000 + REQUEST_TIMEOUT_MARGIN_MS + config.retryBackoffMaxMs)
    assert.ok(shutdownDeadlineMs(config) > flushDeadlineMs(config))
  })
})
