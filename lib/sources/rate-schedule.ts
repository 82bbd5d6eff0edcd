import { ErrorCodes, SqueezeError } from '../errors.js'

/** One step of a rate schedule: this many records per second for this many seconds. */
export interface RateStep {
  readonly recordsPerSecond: number
  readonly seconds: number
}

/**
 * Parses --rate: `N` (records per second), or `N:S,M:T,...` (N per second for S seconds, then M for T, ...; the
 * last rate holds once the schedule ends).
 */
export function parseRateSchedule(text: string): RateStep[] {
  const steps = text.split(',').map((part) => {
    const [rate, seconds, extra] = part.trim().split(':')
    const r = Number(rate)
    const s = seconds === undefined ? Number.POSITIVE_INFINITY : Number(seconds)
    const valid =
      extra === undefined &&
      rate !== '' &&
      Number.isInteger(r) &&
      r >= 1 &&
      (seconds === undefined || (seconds !== '' && s > 0 && Number.isFinite(s)))
    if (!valid)
      throw new SqueezeError(
        ErrorCodes.CONFIG_INVALID,
        `--rate "${text}": write records per second (e.g. 5000), or a schedule of rate:seconds steps (e.g. 2000:30,10000:30,2000:30)`
      )
    return { recordsPerSecond: r, seconds: s }
  })
  return steps
}

/** When each record is due, and how many are due by a time, under a piecewise-constant rate (ms since the start). */
export class RateSchedule {
  private readonly starts: Array<{ atMs: number; records: number; rate: number }> = []

  constructor(steps: readonly RateStep[]) {
    let atMs = 0
    let records = 0
    for (const step of steps) {
      this.starts.push({ atMs, records, rate: step.recordsPerSecond })
      atMs += step.seconds * 1000
      records += step.recordsPerSecond * step.seconds
    }
  }

  /** Milliseconds after the start at which record `index` (from 0) is due. */
  dueAtMs(index: number): number {
    const step = this.stepWhere((s) => s.records <= index)
    return step.atMs + ((index - step.records) * 1000) / step.rate
  }

  /** Records due by `elapsedMs` (the record due exactly then included). */
  dueBy(elapsedMs: number): number {
    const step = this.stepWhere((s) => s.atMs <= elapsedMs)
    return Math.floor(step.records + ((elapsedMs - step.atMs) * step.rate) / 1000) + 1
  }

  private stepWhere(started: (s: { atMs: number; records: number }) => boolean): {
    atMs: number
    records: number
    rate: number
  } {
    let found = this.starts[0] as { atMs: number; records: number; rate: number }
    for (const s of this.starts) if (started(s)) found = s
    return found
  }
}
