import { createGenerator, type GeneratorOptions } from '../generators/index.js'
import type { LogKind } from '../formats/index.js'
import type { SourceItem } from './source.js'

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
  readonly signal?: AbortSignal
  readonly clock?: Clock
}

/**
 * Seeded synthetic logs: the same seed always gives the same records, so codecs compare on equal input. Their
 * times keep to the clock (see eventTiming), so Kafka accepts them and retention keeps them.
 */
export async function* generateRecords(options: GeneratorSourceOptions): AsyncGenerator<SourceItem> {
  const clock = options.clock ?? SYSTEM_CLOCK
  const generator = createGenerator(options.kind, { seed: options.seed, ...eventTiming(options, clock) })
  const limit = options.records ?? Number.POSITIVE_INFINITY
  const started = clock.now()
  for (let i = 0; i < limit; i++) {
    if (options.signal?.aborted === true) return
    if (options.ratePerSecond !== undefined) {
      const due = started + (i * 1000) / options.ratePerSecond
      const wait = due - clock.now()
      if (wait > 1) await clock.sleep(wait)
    }
    const record = generator.next()
    yield { kind: 'record', key: record.key, value: record.value, timestampMs: record.timestampMs }
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
  if (options.ratePerSecond !== undefined) return { clock: { now, mode: 'follow' } }
  const span = options.records === undefined ? 0 : modelledSpanMs(options.kind, options.seed, options.records)
  return { startTimeMs: clock.now() - span, clock: { now, mode: 'bound' } }
}

function modelledSpanMs(kind: LogKind, seed: number, records: number): number {
  const probe = createGenerator(kind, { seed, startTimeMs: 0 })
  const n = Math.min(records, PROBE_RECORDS)
  let last = 0
  for (let i = 0; i < n; i++) last = probe.next().timestampMs
  return Math.round((last / n) * records)
}
