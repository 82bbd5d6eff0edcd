import { errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'

/** Examples kept of the lines that do not parse: enough to see the pattern, not a line per failure. */
const EXAMPLES = 3
const EXAMPLE_CHARS = 160
/** A stream that keeps failing reports its count this often, not once per line. */
const REPORT_EVERY_MS = 30_000

export interface ParseFailureExample {
  readonly line: number
  readonly reason: string
  readonly text: string
}

/**
 * Lines that do not parse, logged as one warning with a count and the first few examples: at the end of a run, and
 * every REPORT_EVERY_MS while a long one keeps failing.
 */
export class ParseFailureLog {
  readonly examples: ParseFailureExample[] = []
  #count = 0
  #reported = 0
  #lastReportMs: number

  constructor(
    private readonly log: Logger,
    private readonly context: Readonly<Record<string, unknown>>,
    private readonly now: () => number = Date.now
  ) {
    this.#lastReportMs = now()
  }

  get count(): number {
    return this.#count
  }

  add(lineNumber: number, text: string, err: unknown): void {
    this.#count++
    if (this.examples.length < EXAMPLES) {
      this.examples.push({
        line: lineNumber,
        reason: errorMessage(err),
        text: text.length > EXAMPLE_CHARS ? `${text.slice(0, EXAMPLE_CHARS)}...` : text
      })
    }
  }

  /** Logs the count so far if it grew and the last report is old enough (or `force`). */
  report(linesRead: number, force = false): void {
    if (this.#count === this.#reported) return
    const now = this.now()
    if (!force && now - this.#lastReportMs < REPORT_EVERY_MS) return
    this.#reported = this.#count
    this.#lastReportMs = now
    this.log.warn(
      { ...this.context, parseErrors: this.#count, linesRead, examples: this.examples },
      `${this.#count} of ${linesRead} lines did not parse`
    )
  }
}
