import { isRetriable, isTransient } from './errors.js'

export interface BackoffOptions {
  readonly initialDelayMs: number
  readonly maxDelayMs: number
}

export interface RetryOptions extends BackoffOptions {
  readonly retries: number
  /** Decides whether an error is worth another try; defaults to the error's own retriable flag. */
  readonly shouldRetry?: (err: unknown) => boolean
  readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void
  /** The jitter's random source in [0, 1); injected so tests and callers with their own source get the same delays. */
  readonly random?: () => number
}

/** Calls to a group or transaction coordinator, which answers "not ready" for a few seconds after an election. */
export const COORDINATOR_RETRY: RetryOptions = { retries: 10, initialDelayMs: 100, maxDelayMs: 2000, shouldRetry: isTransient }

/** The delay before retry number `attempt + 1`: exponential from initialDelayMs, capped at maxDelayMs, ±20 % jitter. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  return Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** attempt) * (0.8 + 0.4 * random())
}

/** Runs `work` until it succeeds, a non-retriable error occurs, or the retries run out (exponential backoff, jitter, cap). */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const shouldRetry = options.shouldRetry ?? isRetriable
  for (let attempt = 0; ; attempt++) {
    try {
      return await work(attempt)
    } catch (err) {
      if (attempt >= options.retries || !shouldRetry(err)) throw err
      const delayMs = backoffDelay(attempt, options, options.random)
      options.onRetry?.(err, attempt + 1, delayMs)
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}
