import { isRetriable, isTransient } from './errors.js'

export interface BackoffOptions {
  readonly initialDelayMs: number
  readonly maxDelayMs: number
  /** Growth per attempt; 2 unless set. */
  readonly factor?: number
}

export interface RetryOptions extends BackoffOptions {
  /** Retries after the first try; without it (and without `deadlineMs`) the loop ends only by error kind or signal. */
  readonly retries?: number
  /** No retry whose delay would end more than this many ms after the first try started. */
  readonly deadlineMs?: number
  /** Decides whether an error is worth another try; defaults to the error's own retriable flag. */
  readonly shouldRetry?: (err: unknown) => boolean
  readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void
  /** The jitter's random source in [0, 1); injected so tests and callers with their own source get the same delays. */
  readonly random?: () => number
  /** Ends the wait between tries at once (shutdown): the retry rejects with the last error. */
  readonly signal?: AbortSignal
}

/** Calls to a group or transaction coordinator, which answers "not ready" for a few seconds after an election. */
export const COORDINATOR_RETRY: RetryOptions = {
  retries: 10,
  initialDelayMs: 100,
  maxDelayMs: 2000,
  shouldRetry: isTransient
}

/** The delay before retry number `attempt + 1`: exponential from initialDelayMs, capped at maxDelayMs, ±20 % jitter. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  return (
    Math.min(options.maxDelayMs, options.initialDelayMs * (options.factor ?? 2) ** attempt) * (0.8 + 0.4 * random())
  )
}

/**
 * Runs `work` until it succeeds, a non-retriable error occurs, the retries or the deadline run out, or `signal`
 * aborts (exponential backoff, jitter, cap). The signal ends only the waits between tries, at once, and the
 * retry rejects with the last error, which says what was not ready; a try under way is the work's own to stop.
 */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const shouldRetry = options.shouldRetry ?? isRetriable
  const deadline = options.deadlineMs === undefined ? Infinity : Date.now() + options.deadlineMs
  const { signal } = options
  for (let attempt = 0; ; attempt++) {
    try {
      return await work(attempt)
    } catch (err) {
      if (attempt >= (options.retries ?? Infinity) || !shouldRetry(err) || signal?.aborted === true) throw err
      const delayMs = backoffDelay(attempt, options, options.random)
      if (Date.now() + delayMs > deadline) throw err
      options.onRetry?.(err, attempt + 1, delayMs)
      if (!(await sleep(delayMs, signal))) throw err
    }
  }
}

/** Waits `ms`; resolves false as soon as `signal` aborts (the timer does not keep the process alive then). */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Waits another part of the code can end early with wake() (a rejoin asked for between heartbeats). */
export class Wakeable {
  private woken: AbortController | null = null

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    const woken = new AbortController()
    this.woken = woken
    await sleep(ms, AbortSignal.any([signal, woken.signal]))
    this.woken = null
  }

  wake(): void {
    this.woken?.abort()
  }
}
