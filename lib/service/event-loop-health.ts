import { monitorEventLoopDelay } from 'node:perf_hooks'

export interface EventLoopHealthOptions {
  /** The longest event-loop delay a live process shows; above it /healthz answers 503. */
  readonly maxDelayMs: number
  /** How long a delay counts: the worst one of the current and the previous window is judged. */
  readonly windowMs: number
}

/**
 * A loop stalled for seconds (a compression on the event loop that never ends, a runaway parse) misses its
 * scrapes, heartbeats and flushes; the kubelet restarts the pod once /healthz reports it. The bound is far above
 * the longest batch a healthy service seals inline, so a busy service is not restarted for being busy.
 */
export const DEFAULT_EVENT_LOOP_HEALTH: EventLoopHealthOptions = { maxDelayMs: 5000, windowMs: 30_000 }

export interface EventLoopHealth {
  /** False while the worst delay of the last one or two windows is above the bound. */
  healthy(): boolean
  /** The worst delay seen, for the /healthz body. */
  reason(): string
  stop(): void
}

/** Watches the event-loop delay (perf_hooks monitorEventLoopDelay) for /healthz. */
export function watchEventLoop(options: EventLoopHealthOptions = DEFAULT_EVENT_LOOP_HEALTH): EventLoopHealth {
  const histogram = monitorEventLoopDelay({ resolution: 20 })
  histogram.enable()
  let previousMaxMs = 0
  const timer = setInterval(() => {
    previousMaxMs = histogram.max / 1e6
    histogram.reset()
  }, options.windowMs)
  timer.unref()
  const worstMs = (): number => Math.max(previousMaxMs, histogram.max / 1e6)
  return {
    healthy: () => worstMs() <= options.maxDelayMs,
    reason: () => `event loop delayed ${Math.round(worstMs())} ms (bound ${options.maxDelayMs} ms)`,
    stop: () => {
      clearInterval(timer)
      histogram.disable()
    }
  }
}
