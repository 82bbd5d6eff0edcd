import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SqueezeError } from '../../lib/errors.js'
import { backoffDelay, retry } from '../../lib/retry.js'

describe('retry', () => {
  it('backs off exponentially from initialDelayMs, capped at maxDelayMs, with ±20 % jitter from the given random source', () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1000 }
    assert.deepEqual([0, 1, 2, 3, 4, 10].map((attempt) => backoffDelay(attempt, options, () => 0.5)), [100, 200, 400, 800, 1000, 1000])
    assert.equal(backoffDelay(1, options, () => 0), 160)
    assert.equal(backoffDelay(1, options, () => 0.999999), 200 * (0.8 + 0.4 * 0.999999))
  })

  it('retries retriable errors with the injected random source\'s delays, and gives up on the others', async () => {
    const delays: number[] = []
    let calls = 0
    const result = await retry(async (attempt) => {
      calls++
      if (attempt < 2) throw new SqueezeError('SQUEEZE_ERR_TEST', 'busy', { retriable: true })
      return 'done'
    }, { retries: 5, initialDelayMs: 1, maxDelayMs: 4, random: () => 0, onRetry: (_err, _attempt, delayMs) => delays.push(delayMs) })
    assert.equal(result, 'done')
    assert.equal(calls, 3)
    assert.deepEqual(delays, [0.8, 1.6])
    calls = 0
    await assert.rejects(retry(async () => {
      calls++
      throw new SqueezeError('SQUEEZE_ERR_TEST', 'bad input')
    }, { retries: 5, initialDelayMs: 1, maxDelayMs: 1 }), { message: 'bad input' })
    assert.equal(calls, 1)
  })
})
