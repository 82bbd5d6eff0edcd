import { isRetriable } from './errors.js'

export interface RetryOptions {
  readonly retries: number
  readonly initialDelayMs: number
  readonly maxDelayMs: number
  /** Decides whether an error is worth another try; defaults to the error's own retriable flag. */
  readonly shouldRetry?: (err: unknown) => boolean
  readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void
}

/** Runs `work` until it succeeds, a non-retriable error occurs, or the retries run out (exponential backoff, jitter, cap). */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const shouldRetry = options.shouldRetry ?? isRetriable
  for (let attempt = 0; ; attempt++) {
    try {
      return await work(attempt)
    } catch (err) {
      if (attempt >= options.retries || !shouldRetry(err)) throw err
      const delayMs = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** attempt) * (0.8 + 0.4 * Math.random())
      options.onRetry?.(err, attempt + 1, delayMs)
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}
