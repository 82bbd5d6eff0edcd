import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SqueezeError } from '../../lib/errors.js'
import { backoffDelay, retry, sleep } from '../../lib/retry.js'

describe('retry', () => {
  it('backs off exponentially from initialDelayMs, capped at maxDelayMs, with ±20 % jitter from the given random source', () => {
    const options = { initialDelayMs: 100, maxDelayMs: 1000 }
    assert.deepEqual(
      [0, 1, 2, 3, 4, 10].map((attempt) => backoffDelay(attempt, options, () => 0.5)),
      [100, 200, 400, 800, 1000, 1000]
    )
    assert.equal(
      backoffDelay(1, options, () => 0),
      160
    )
    assert.equal(
      backoffDelay(1, options, () => 0.999999),
      200 * (0.8 + 0.4 * 0.999999)
    )
  })

  it("retries retriable errors with the injected random source's delays, and gives up on the others", async () => {
    const delays: number[] = []
    let calls = 0
    const result = await retry(
      async (attempt) => {
        calls++
        if (attempt < 2) throw new SqueezeError('SQUEEZE_ERR_TEST', 'busy', { retriable: true })
        return 'done'
      },
      {
        retries: 5,
        initialDelayMs: 1,
        maxDelayMs: 4,
        random: () => 0,
        onRetry: (_err, _attempt, delayMs) => delays.push(delayMs)
      }
    )
    assert.equal(result, 'done')
    assert.equal(calls, 3)
    assert.deepEqual(delays, [0.8, 1.6])
    calls = 0
    await assert.rejects(
      retry(
        async () => {
          calls++
          throw new SqueezeError('SQUEEZE_ERR_TEST', 'bad input')
        },
        { retries: 5, initialDelayMs: 1, maxDelayMs: 1 }
      ),
      { message: 'bad input' }
    )
    assert.equal(calls, 1)
  })

  it('draws the jitter from the injected random source, one draw per retry, growing by the given factor', async () => {
    const draws = [0, 0.5, 0.999]
    const delays: number[] = []
    await retry(
      async (attempt) => {
        if (attempt < 3) throw new SqueezeError('SQUEEZE_ERR_TEST', 'busy', { retriable: true })
      },
      {
        retries: 3,
        initialDelayMs: 1,
        maxDelayMs: 100,
        factor: 3,
        random: () => draws.shift() ?? 0,
        onRetry: (_err, _attempt, delayMs) => delays.push(delayMs)
      }
    )
    assert.deepEqual(delays, [1 * 0.8, 3 * 1, 9 * (0.8 + 0.4 * 0.999)])
    assert.equal(draws.length, 0)
  })

  it('an abort during a wait ends it at once and rejects with the last error', async () => {
    const controller = new AbortController()
    const failure = new SqueezeError('SQUEEZE_ERR_TEST', 'not ready', { retriable: true })
    let calls = 0
    const pending = retry(
      async () => {
        calls++
        throw failure
      },
      {
        deadlineMs: 3_600_000,
        initialDelayMs: 3_600_000,
        maxDelayMs: 3_600_000,
        random: () => 0,
        signal: controller.signal,
        onRetry: () => controller.abort()
      }
    )
    // Only the abort can settle this before the test's own timeout: the wait is an hour (48 min with the least
    // jitter, so inside the deadline; more jitter would end the loop before onRetry, and the signal never abort).
    await assert.rejects(pending, (err) => err === failure)
    assert.equal(calls, 1)
    assert.equal(await sleep(3_600_000, controller.signal), false, 'an already aborted signal does not wait')
  })

  it('a deadline stops before a wait that would end after it, and a false shouldRetry bails at the first error', async () => {
    let calls = 0
    await assert.rejects(
      retry(
        async () => {
          calls++
          throw new SqueezeError('SQUEEZE_ERR_TEST', 'not ready', { retriable: true })
        },
        { deadlineMs: 0, initialDelayMs: 1, maxDelayMs: 1 }
      ),
      { message: 'not ready' }
    )
    assert.equal(calls, 1)
    const seen: unknown[] = []
    await assert.rejects(
      retry(
        async () => {
          throw new SqueezeError('SQUEEZE_ERR_TEST', 'retriable, but the caller knows better', { retriable: true })
        },
        {
          retries: 5,
          initialDelayMs: 1,
          maxDelayMs: 1,
          shouldRetry: (err) => {
            seen.push(err)
            return false
          }
        }
      ),
      { message: 'retriable, but the caller knows better' }
    )
    assert.equal(seen.length, 1)
  })

  it('onRetry sees every retry with its error, 1-based attempt number and delay', async () => {
    const seen: Array<[string, number, number]> = []
    await assert.rejects(
      retry(
        async (attempt) => {
          throw new SqueezeError('SQUEEZE_ERR_TEST', `try ${attempt}`, { retriable: true })
        },
        {
          retries: 3,
          initialDelayMs: 1,
          maxDelayMs: 2,
          random: () => 0.5,
          onRetry: (err, attempt, delayMs) => seen.push([(err as Error).message, attempt, delayMs])
        }
      ),
      { message: 'try 3' }
    )
    assert.deepEqual(seen, [
      ['try 0', 1, 1],
      ['try 1', 2, 2],
      ['try 2', 3, 2]
    ])
  })
})
