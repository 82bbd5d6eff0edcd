import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'

/**
 * Runs a start-up step (connect, find the topics) and, while `waitMs` allows, retries it with backoff when it
 * fails, so a service started before its cluster waits (readyz 503) instead of exiting into a restart loop.
 * With `waitMs` 0 the first failure is final: the right thing for a command a person typed.
 */
export async function untilClusterReady<T>(step: () => Promise<T>, options: { waitMs: number; log: Logger; signal?: AbortSignal }): Promise<T> {
  const deadline = Date.now() + options.waitMs
  for (let attempt = 0; ; attempt++) {
    try {
      return await step()
    } catch (err) {
      // A wrong setting does not fix itself by waiting.
      if (err instanceof SqueezeError && err.code === ErrorCodes.CONFIG_INVALID) throw err
      const delayMs = Math.min(10_000, 500 * 2 ** attempt)
      if (Date.now() + delayMs > deadline || options.signal?.aborted === true) throw err
      options.log.warn({ attempt: attempt + 1, retryInMs: delayMs, reason: errorMessage(err) }, 'Kafka not ready yet; waiting (--wait-for-brokers-s)')
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}
