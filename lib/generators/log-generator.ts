/** One generated Kafka record: key (null when the kind has no natural key), value, event time. */
export interface GeneratedRecord {
  key: Buffer | null
  value: Buffer
  timestampMs: number
}

export interface GeneratorOptions {
  seed: number
  /** Event time of the first record; defaults to the clock's time, else a fixed instant so output depends on the seed only. */
  startTimeMs?: number
  /**
   * Wall clock (ms) the event times keep to. `follow`: every record takes the clock's time (a live --rate
   * stream). `bound`: times advance by the modelled gaps but never past the clock's time (a bulk run placed
   * before now). Contents depend on the seed only either way: the gaps are still drawn, just not all applied.
   */
  clock?: { now: () => number; mode: 'follow' | 'bound' }
}

export interface LogGenerator {
  next(): GeneratedRecord
}

/** 2024-03-04T09:00:00Z: a Monday morning, so diurnal-looking traffic starts busy. */
export const DEFAULT_START_MS = Date.UTC(2024, 2, 4, 9, 0, 0)

export function startTime(opts: GeneratorOptions): number {
  return opts.startTimeMs ?? opts.clock?.now() ?? DEFAULT_START_MS
}

/**
 * How a generator moves its event time on by a modelled gap, in its own unit (`unitsPerMs` 1000 for
 * microseconds). Never goes backwards, even if the clock does.
 */
export function timeStep(opts: GeneratorOptions, unitsPerMs = 1): (current: number, gap: number) => number {
  const clock = opts.clock
  if (clock === undefined) return (current, gap) => current + gap
  const now = (): number => Math.floor(clock.now() * unitsPerMs)
  if (clock.mode === 'follow') return (current) => Math.max(current, now())
  return (current, gap) => Math.max(current, Math.min(current + gap, now()))
}
