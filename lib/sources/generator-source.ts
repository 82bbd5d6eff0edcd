import { createGenerator, type GeneratorOptions } from '../generators/index.js'
import type { LogKind } from '../formats/index.js'
import { RateSchedule, type RateStep } from './rate-schedule.js'
import type { SourceBatch, SourceItem } from './source.js'

export { parseRateSchedule, RateSchedule, type RateStep } from './rate-schedule.js'

/** Time as the generator sees it: tests pass a fake one to run days of --rate traffic in seconds. */
export interface Clock {
  now(): number
  sleep(ms: number): Promise<void>
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms))
}

export interface GeneratorSourceOptions {
  readonly kind: LogKind
  readonly seed: number
  /** Stop after this many records; unbounded when absent (until the signal aborts). */
  readonly records?: number
  /** Records per second; as fast as the producer takes them when absent. */
  readonly ratePerSecond?: number
  /** Rates that change on a schedule, each for its seconds; the last holds after them. Overrides ratePerSecond. */
  readonly rateSchedule?: readonly RateStep[]
  readonly signal?: AbortSignal
  readonly clock?: Clock
}

/**
 * Seeded synthetic logs: the same seed always gives the same records, so codecs compare on equal input. Their
 * times keep to the clock (see eventTiming), so Kafka accepts them and retention keeps them.
 */
export async function* generateRecords(options: GeneratorSourceOptions): AsyncGenerator<SourceItem> {
  for await (const batch of generateRecordBatches(options)) yield* batch
}

/** Records per batch when no rate holds them back. */
const BATCH_RECORDS = 1000

/** generateRecords a batch at a time: as many as are due (with --rate), else up to BATCH_RECORDS. */
export async function* generateRecordBatches(options: GeneratorSourceOptions): AsyncGenerator<SourceBatch> {
  const clock = options.clock ?? SYSTEM_CLOCK
  const generator = createGenerator(options.kind, { seed: options.seed, ...eventTiming(options, clock) })
  const limit = options.records ?? Number.POSITIVE_INFINITY
  const schedule = rateScheduleOf(options)
  const started = clock.now()
  for (let i = 0; i < limit;) {
    if (options.signal?.aborted === true) return
    let end = Math.min(limit, i + BATCH_RECORDS)
    if (schedule !== null) {
      const wait = started + schedule.dueAtMs(i) - clock.now()
      if (wait > 1) await clock.sleep(wait)
      // Every record due by now, and at least the one waited for.
      end = Math.min(end, Math.max(i + 1, schedule.dueBy(clock.now() - started)))
    }
    const batch: SourceItem[] = []
    for (; i < end; i++) {
      const record = generator.next()
      batch.push({ kind: 'record', key: record.key, value: record.value, timestampMs: record.timestampMs })
    }
    yield batch
  }
}

/** Records the span is measured on before a bulk run; all of them when the run is this short. */
const PROBE_RECORDS = 10_000

/**
 * With --rate, every record carries the clock's time, as live traffic does: a run of weeks stays at "now"
 * (Kafka 4 rejects batches more than log.message.timestamp.after.max.ms, 1 h, ahead). Without it, a bulk run
 * keeps the modelled gaps between records and ends at about the time it starts: its first record is placed
 * N x the seed's mean gap (measured on its first records) before now, and no time passes the clock.
 */
function eventTiming(options: GeneratorSourceOptions, clock: Clock): Pick<GeneratorOptions, 'startTimeMs' | 'clock'> {
  const now = (): number => clock.now()
  if (rateScheduleOf(options) !== null) return { clock: { now, mode: 'follow' } }
  const span = options.records === undefined ? 0 : modelledSpanMs(options.kind, options.seed, options.records)
  return { startTimeMs: clock.now() - span, clock: { now, mode: 'bound' } }
}

function rateScheduleOf(options: GeneratorSourceOptions): RateSchedule | null {
  if (options.rateSchedule !== undefined && options.rateSchedule.length > 0)
    return new RateSchedule(options.rateSchedule)
  return options.ratePerSecond === undefined
    ? null
    : new RateSchedule([{ recordsPerSecond: options.ratePerSecond, seconds: Number.POSITIVE_INFINITY }])
}

function modelledSpanMs(kind: LogKind, seed: number, records: number): number {
  const probe = createGenerator(kind, { seed, startTimeMs: 0 })
  const n = Math.min(records, PROBE_RECORDS)
  let last = 0
  for (let i = 0; i < n; i++) last = probe.next().timestampMs
  return Math.round((last / n) * records)
}
