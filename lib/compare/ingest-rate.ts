import { seededRandom } from './projection/seeded-random.js'

/**
 * How fast the source receives bytes, from evidence that is about the source and not about how fast compare
 * replayed it: the broker's offsets by timestamp for a topic, the lines' own timestamps for a file. One robust
 * span serves every kind of evidence: the first and last percent of records are left out at each end, so a
 * record stamped years away from the rest does not stretch the span.
 */

/** Where a rate's evidence came from. */
export type RateSource = 'broker-offsets' | 'record-timestamps' | 'line-timestamps' | 'generator-timestamps'

export interface RateWindow {
  /** ISO 8601 times of the first and last record of the trimmed span. */
  readonly from: string
  readonly to: string
  readonly source: RateSource
  /** Records counted between from and to. */
  readonly records: number
  /** For broker offsets: how far back from now the broker was asked (the last day by default); null otherwise. */
  readonly lookbackSeconds: number | null
}

export interface KnownIngestRate {
  /** Uncompressed bytes per second the source receives: recordsPerSecond x bytesPerRecord. */
  readonly bytesPerSecond: number
  readonly recordsPerSecond: number
  /** Uncompressed batch bytes per record, as compare measured them. */
  readonly bytesPerRecord: number
  readonly window: RateWindow
}

export type IngestRate = KnownIngestRate | { readonly unknown: string }

export function isKnownRate(rate: IngestRate): rate is KnownIngestRate {
  return !('unknown' in rate)
}

/** Share of records left out at each end of the span (at least one record each). */
export const RATE_TRIM = 0.01
export const MIN_RATE_RECORDS = 10
/** A burst shorter than this says how fast a producer can send, not how fast the source grows. */
export const MIN_RATE_SPAN_MS = 1000

/** Records stamped at or after `ms` (never increasing as ms grows); a broker's answer may take a round trip. */
export type CountSince = (ms: number) => number | Promise<number>

export interface RecordSpan {
  readonly fromMs: number
  readonly toMs: number
  readonly records: number
}

/**
 * The trimmed span of the records stamped in [fromMs, toMs]: the first and last RATE_TRIM of them (at least one
 * each) left out, from the first kept record's time to the last one's, and how many records it holds. Records
 * stamped after toMs count as stamped at toMs. Binary search on `countSince`: a broker is asked ~2 x log2(range) times.
 */
export async function robustSpan(
  countSince: CountSince,
  range: { fromMs: number; toMs: number }
): Promise<RecordSpan | { unknown: string }> {
  const fromMs = Math.floor(range.fromMs)
  const end = Math.floor(range.toMs) + 1
  const count = async (ms: number): Promise<number> => (ms >= end ? 0 : await countSince(ms))
  const total = await count(fromMs)
  if (total < MIN_RATE_RECORDS)
    return {
      unknown: `only ${Math.round(total)} record${Math.round(total) === 1 ? '' : 's'} stamped between ${iso(fromMs)} and ${iso(end - 1)}`
    }
  const trim = Math.max(1, Math.ceil(RATE_TRIM * total))
  // count drops just after a record's time, so "the first t where at most x remain" is a record's time + 1: here
  // the times of the first and last kept records. Records sharing a kept record's time (a boot burst) stay in.
  const first = (await firstTime(fromMs, end, async (t) => (await count(t)) <= total - trim - 1)) - 1
  const last = (await firstTime(fromMs, end, async (t) => (await count(t)) <= trim)) - 1
  const records = total - 2 * trim
  if (last - first < MIN_RATE_SPAN_MS) {
    return {
      unknown: `${Math.round(records)} records stamped within ${Math.max(0, last - first)} ms of each other: too short a span for a rate`
    }
  }
  return { fromMs: first, toMs: last, records }
}

/** The smallest t in (lo, hi] where `holds` turns true, given it is false at lo, true at hi, and stays true once true. */
async function firstTime(lo: number, hi: number, holds: (ms: number) => Promise<boolean>): Promise<number> {
  let no = lo
  let yes = hi
  while (yes - no > 1) {
    const mid = no + Math.floor((yes - no) / 2)
    if (await holds(mid)) yes = mid
    else no = mid
  }
  return yes
}

/** Turns a span into a rate in bytes per second, or says why there is none. */
export function rateFromSpan(
  span: RecordSpan | { unknown: string },
  bytesPerRecord: number,
  source: RateSource,
  lookbackSeconds: number | null = null
): IngestRate {
  if ('unknown' in span) return span
  if (!(bytesPerRecord > 0))
    return { unknown: 'no records were copied, so there are no bytes per record to scale the rate by' }
  // n records stamped from first to last are n - 1 intervals apart.
  const recordsPerSecond = (span.records - 1) / ((span.toMs - span.fromMs) / 1000)
  return {
    bytesPerSecond: recordsPerSecond * bytesPerRecord,
    recordsPerSecond,
    bytesPerRecord,
    window: { from: iso(span.fromMs), to: iso(span.toMs), source, records: Math.round(span.records), lookbackSeconds }
  }
}

/**
 * Timestamps seen in a stream, kept as a uniform reservoir of at most `capacity` (a long file does not grow
 * memory), with the exact count. countSince scales the sample up to the whole stream.
 */
export class TimestampSample {
  private readonly reservoir: Float64Array
  private stored = 0
  private seen = 0
  private sorted = true
  /** Seeded, so the same input gives the same report. */
  private readonly next: () => number

  constructor(capacity = 100_000, seed = 0x9e3779b9) {
    this.reservoir = new Float64Array(capacity)
    this.next = seededRandom(seed)
  }

  get count(): number {
    return this.seen
  }

  add(ms: number): void {
    if (!Number.isFinite(ms)) return
    this.seen++
    this.sorted = false
    if (this.stored < this.reservoir.length) {
      this.reservoir[this.stored++] = ms
      return
    }
    const slot = Math.floor(this.next() * this.seen)
    if (slot < this.reservoir.length) this.reservoir[slot] = ms
  }

  /** Moves every timestamp by `ms` (a year-less format dated one year too late). */
  shift(ms: number): void {
    for (let i = 0; i < this.stored; i++) this.reservoir[i] = (this.reservoir[i] as number) + ms
  }

  /** Earliest and latest sampled timestamps; undefined when empty. */
  range(): { fromMs: number; toMs: number } | undefined {
    const values = this.values()
    if (values.length === 0) return undefined
    return { fromMs: values[0] as number, toMs: values[values.length - 1] as number }
  }

  readonly countSince: CountSince = (ms: number): number => {
    const values = this.values()
    let lo = 0
    let hi = values.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((values[mid] as number) < ms) lo = mid + 1
      else hi = mid
    }
    return values.length === 0 ? 0 : ((values.length - lo) * this.seen) / values.length
  }

  private values(): Float64Array {
    const values = this.reservoir.subarray(0, this.stored)
    if (!this.sorted) {
      values.sort()
      this.sorted = true
    }
    return values
  }
}

/** The rate of a stream of timestamps (file lines, generated records, copied records). */
export async function rateFromSample(
  sample: TimestampSample,
  bytesPerRecord: number,
  source: RateSource
): Promise<IngestRate> {
  const range = sample.range()
  if (range === undefined) return { unknown: `no ${SOURCE_NOUNS[source]} to measure a rate from` }
  return rateFromSpan(await robustSpan(sample.countSince, range), bytesPerRecord, source)
}

const SOURCE_NOUNS: Readonly<Record<RateSource, string>> = {
  'broker-offsets': 'records in the window',
  'record-timestamps': 'record timestamps',
  'line-timestamps': 'line timestamps',
  'generator-timestamps': 'generated timestamps'
}

function iso(ms: number): string {
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString()
}
