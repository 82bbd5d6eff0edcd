import type { Logger } from '../log/logger.js'
import { formatBytes } from '../units/bytes.js'

/** Where a long run is: its phase, and how far through it when that can be counted. */
export interface ProgressReport {
  readonly phase: string
  /** What the phase is at now (the codec being swept): shown, but not a new phase. */
  readonly detail?: string
  readonly done?: number
  /** Undefined where the end is not known ahead (a file's lines): then no percentage and no ETA. */
  readonly total?: number
  readonly unit?: 'records' | 'bytes' | 'targets' | 'levels' | 'topics'
  /** Bytes read so far, when what is counted is not bytes (the audit counts topics). */
  readonly bytesRead?: number
}

export type OnProgress = (report: ProgressReport) => void

/** What Progress writes to: stderr, or a test's stand-in. */
export interface ProgressStream {
  readonly isTTY?: boolean
  readonly columns?: number
  write(text: string): unknown
}

export interface ProgressOptions {
  readonly stream: ProgressStream
  readonly log: Pick<Logger, 'info'>
  /** No output at all (`--quiet`). */
  readonly quiet: boolean
  /** Without a terminal: one JSON log line this often. */
  readonly logEveryMs?: number
  readonly now?: () => number
}

/** A terminal's line is redrawn at most this often: more is flicker and CPU, not information. */
const REDRAW_MS = 200
const DEFAULT_LOG_EVERY_MS = 10_000

/**
 * A long run's progress on stderr: on a terminal, one line redrawn in place (phase, done/total, rate, ETA);
 * elsewhere a JSON log line every logEveryMs, so a CI log or a container's log shows the run is alive without a
 * line per update. The rate and ETA are over the current phase, from its first report.
 */
export class Progress {
  readonly #options: ProgressOptions
  readonly #now: () => number
  #phase: string | undefined
  #phaseStartMs = 0
  #lastWriteMs = Number.NEGATIVE_INFINITY
  #drawn = false

  constructor(options: ProgressOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** Takes a report; writes it when the last write is old enough, or at once when the phase changes. */
  readonly report: OnProgress = (report) => {
    if (this.#options.quiet) return
    const now = this.#now()
    const newPhase = report.phase !== this.#phase
    if (newPhase) {
      this.#phase = report.phase
      this.#phaseStartMs = now
    }
    const tty = this.#options.stream.isTTY === true
    const every = tty ? REDRAW_MS : (this.#options.logEveryMs ?? DEFAULT_LOG_EVERY_MS)
    // A terminal shows a new phase at once; a log gets a line per interval whatever the phases between.
    if ((!tty || !newPhase) && now - this.#lastWriteMs < every) return
    this.#lastWriteMs = now
    const elapsedS = (now - this.#phaseStartMs) / 1000
    if (tty) {
      const columns = this.#options.stream.columns
      const width = Math.max(20, (columns !== undefined && columns > 0 ? columns : 100) - 1)
      this.#options.stream.write(`\r\u001b[2K${progressLine(report, elapsedS).slice(0, width)}`)
      this.#drawn = true
    } else {
      this.#options.log.info({ progress: progressFields(report, elapsedS) }, 'progress')
    }
  }

  /** Writes `report` now, whatever the interval: a log then ends on the final count. */
  flush(report: ProgressReport): void {
    this.#lastWriteMs = Number.NEGATIVE_INFINITY
    this.report(report)
  }

  /** Clears the terminal's progress line, before the report is printed. */
  done(): void {
    if (this.#drawn) this.#options.stream.write('\r\u001b[2K')
    this.#drawn = false
  }
}

function amount(n: number, unit: ProgressReport['unit']): string {
  return unit === 'bytes' ? formatBytes(n) : Math.round(n).toLocaleString('en-US')
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?'
  if (seconds < 60) return `${Math.ceil(seconds)}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`
  return `${Math.floor(seconds / 3600)}h${String(Math.round((seconds % 3600) / 60)).padStart(2, '0')}m`
}

function progressFields(
  report: ProgressReport,
  elapsedS: number
): {
  phase: string
  done?: number
  total?: number
  unit?: string
  bytesRead?: number
  perSecond?: number
  etaSeconds?: number
} {
  const { phase, done, total, unit, bytesRead } = report
  if (done === undefined) return { phase }
  const perSecond = elapsedS > 0 ? done / elapsedS : undefined
  const left = total === undefined ? undefined : Math.max(0, total - done)
  const etaSeconds = left === undefined || perSecond === undefined || perSecond === 0 ? undefined : left / perSecond
  return {
    phase: phase as string,
    done,
    ...(total === undefined ? {} : { total }),
    ...(unit === undefined ? {} : { unit }),
    ...(bytesRead === undefined ? {} : { bytesRead }),
    ...(perSecond === undefined ? {} : { perSecond: Math.round(perSecond) }),
    ...(etaSeconds === undefined ? {} : { etaSeconds: Math.ceil(etaSeconds) })
  }
}

/** "copy  12,000/50,000 records  24%  8,000/s  ETA 5s". */
export function progressLine(report: ProgressReport, elapsedS: number): string {
  const f = progressFields(report, elapsedS)
  if (report.detail !== undefined) f.phase = `${f.phase} ${report.detail}`
  if (f.done === undefined) return `${f.phase}...`
  const unit = report.unit ?? 'records'
  const count =
    f.total === undefined
      ? `${amount(f.done, report.unit)} ${unit}`
      : `${amount(f.done, report.unit)}/${amount(f.total, report.unit)} ${unit}`
  const percent =
    f.total === undefined || f.total === 0 ? '' : `  ${Math.min(100, Math.floor((f.done / f.total) * 100))}%`
  const read = f.bytesRead === undefined ? '' : `  ${formatBytes(f.bytesRead)} read`
  // Topics a second is a fraction below one: the ETA says the pace better.
  const rate = f.perSecond === undefined || report.unit === 'topics' ? '' : `  ${amount(f.perSecond, report.unit)}/s`
  const eta = f.etaSeconds === undefined ? '' : `  ETA ${duration(f.etaSeconds)}`
  return `${f.phase}  ${count}${percent}${read}${rate}${eta}`
}
