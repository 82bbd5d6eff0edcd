import type { AuditProgressSink } from './run-audit.js'

export interface ProgressOptions {
  readonly stream: NodeJS.WriteStream | { write(text: string): boolean; isTTY?: boolean }
  /** Seconds between JSON lines when the stream is not a terminal. */
  readonly everySeconds: number
  readonly now?: () => number
}

/**
 * Topics done out of total, bytes read and an ETA on stderr: one rewritten line on a terminal, else a JSON
 * line every few seconds (and one at the end) that a log collector can keep.
 */
export class AuditProgress implements AuditProgressSink {
  private total = 0
  private done = 0
  private bytes = 0
  private readonly startedAt: number
  private lastJsonAt = Number.NEGATIVE_INFINITY
  private readonly now: () => number

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? (() => performance.now())
    this.startedAt = this.now()
  }

  begin(topics: number): void {
    this.total = topics
    this.report(true)
  }

  topicDone(_topic: string, bytesRead: number): void {
    this.done++
    this.bytes += bytesRead
    this.report(this.done === this.total)
  }

  /** Clears the terminal line, so the report starts on a clean one. */
  end(): void {
    if (this.options.stream.isTTY === true) this.options.stream.write('\r\u001b[2K')
  }

  /** Seconds left at the pace so far; null before the first topic ends. */
  etaSeconds(): number | null {
    if (this.done === 0) return null
    const elapsed = (this.now() - this.startedAt) / 1000
    return (elapsed / this.done) * (this.total - this.done)
  }

  private report(force: boolean): void {
    const eta = this.etaSeconds()
    if (this.options.stream.isTTY === true) {
      const mib = (this.bytes / 1024 ** 2).toFixed(1)
      const left = eta === null ? '?' : `${Math.ceil(eta)} s`
      this.options.stream.write(`\r\u001b[2Kaudit: ${this.done}/${this.total} topics, ${mib} MiB read, ETA ${left}`)
      return
    }
    const at = this.now()
    if (!force && at - this.lastJsonAt < this.options.everySeconds * 1000) return
    this.lastJsonAt = at
    const line = {
      msg: 'audit progress',
      topicsDone: this.done,
      topics: this.total,
      bytesRead: this.bytes,
      etaSeconds: eta === null ? null : Math.round(eta)
    }
    this.options.stream.write(`${JSON.stringify(line)}\n`)
  }
}
