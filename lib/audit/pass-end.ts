import { ErrorCodes, SqueezeError } from '../errors.js'

/** What ended an audit pass before every topic was done. */
export type PassEndCause = 'max-duration' | 'interrupt'

/**
 * The end of an audit pass as one signal: --max-duration's timer or the caller's interrupt, whichever comes first.
 * Its reason is a RUN_CUT error naming the cause, which a topic cut by it reports as its error.
 */
export class PassEnd {
  private readonly controller = new AbortController()
  private cause: PassEndCause | null = null
  private readonly timer: NodeJS.Timeout | undefined
  private readonly onInterrupt = (): void => this.end('interrupt', 'cut: the pass was interrupted')

  constructor(
    maxDurationMs: number | undefined,
    private readonly interrupt: AbortSignal | undefined
  ) {
    this.timer =
      maxDurationMs === undefined
        ? undefined
        : setTimeout(
            () => this.end('max-duration', `cut: --max-duration (${maxDurationMs / 1000} s) ended the pass`),
            maxDurationMs
          )
    if (interrupt?.aborted === true) this.onInterrupt()
    else interrupt?.addEventListener('abort', this.onInterrupt, { once: true })
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** What ended the pass; null while it runs. */
  get endedBy(): PassEndCause | null {
    return this.cause
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.interrupt?.removeEventListener('abort', this.onInterrupt)
  }

  private end(cause: PassEndCause, why: string): void {
    if (this.controller.signal.aborted) return
    this.cause = cause
    this.controller.abort(new SqueezeError(ErrorCodes.RUN_CUT, why))
  }
}

/**
 * Runs one topic with a cut signal of its own that follows the pass's: the listeners its read and projection add
 * go with the topic, instead of piling up on the pass's signal when a topic fails before removing them.
 */
export async function withTopicCut<T>(pass: AbortSignal, run: (cut: AbortSignal) => Promise<T>): Promise<T> {
  const topic = new AbortController()
  const follow = (): void => topic.abort(pass.reason)
  if (pass.aborted) follow()
  else pass.addEventListener('abort', follow, { once: true })
  try {
    return await run(topic.signal)
  } finally {
    pass.removeEventListener('abort', follow)
  }
}
