import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  isKnownRate,
  rateFromSample,
  rateFromSpan,
  robustSpan,
  TimestampSample,
  type KnownIngestRate
} from '../../../lib/compare/ingest-rate.js'

const HOUR = 3_600_000
const START = Date.UTC(2026, 10, 30, 7, 0, 0)

/** `n` records one every `gapMs` from START. */
function evenly(n: number, gapMs: number): number[] {
  return Array.from({ length: n }, (_, i) => START + i * gapMs)
}

function sampleOf(timestamps: readonly number[], capacity?: number): TimestampSample {
  const sample = new TimestampSample(capacity)
  for (const ms of timestamps) sample.add(ms)
  return sample
}

async function knownRate(timestamps: readonly number[], bytesPerRecord = 200): Promise<KnownIngestRate> {
  const rate = await rateFromSample(sampleOf(timestamps), bytesPerRecord, 'line-timestamps')
  assert.ok(isKnownRate(rate), JSON.stringify(rate))
  return rate
}

function within(actual: number, expected: number, share: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= expected * share, `${what}: ${actual} vs ${expected}`)
}

describe('ingest rate', () => {
  it("is records per second over the records' own span times the bytes per record", async () => {
    // 10,000 records, one every 360 ms: 10 records/s, over 1 h.
    const rate = await knownRate(evenly(10_000, 360))
    within(rate.recordsPerSecond, 1000 / 360, 1e-9, 'records/s')
    assert.equal(rate.bytesPerSecond, rate.recordsPerSecond * 200)
    assert.equal(rate.window.source, 'line-timestamps')
    assert.equal(rate.window.lookbackSeconds, null)
    // The first and last 1% are left out of the span: it runs from record 100 to record 9899.
    assert.equal(rate.window.from, new Date(START + 100 * 360).toISOString())
    assert.equal(rate.window.to, new Date(START + 9899 * 360).toISOString())
    assert.equal(rate.window.records, 9800)
  })

  it('one record stamped years away, before or after the rest, leaves the rate unchanged', async () => {
    const base = evenly(5000, 720)
    const clean = await knownRate(base)
    const yearsEarlier = Date.UTC(2019, 0, 1)
    const yearsLater = Date.UTC(2031, 0, 1)
    for (const [label, timestamps] of [
      ['years earlier, first', [yearsEarlier, ...base]],
      ['years earlier, in the middle', [...base.slice(0, 2500), yearsEarlier, ...base.slice(2500)]],
      ['years later, last', [...base, yearsLater]]
    ] as const) {
      const rate = await knownRate(timestamps)
      within(rate.recordsPerSecond, clean.recordsPerSecond, 0.01, label)
      assert.ok(
        Date.parse(rate.window.from) >= START && Date.parse(rate.window.to) <= START + 5000 * 720,
        `${label}: window ${rate.window.from}..${rate.window.to}`
      )
    }
  })

  it('a handful of records still trims one at each end, so a lone outlier never sets the span', async () => {
    const timestamps = [Date.UTC(2020, 0, 1), ...evenly(20, 60_000)]
    const rate = await knownRate(timestamps)
    within(rate.recordsPerSecond, 1 / 60, 0.01, 'records/s')
  })

  it('records sharing one timestamp (a boot burst) count, rather than being trimmed away together', async () => {
    // 1,000 lines in the first second, then one a second for 1,000 s: 2,000 records over 1,000 s.
    const timestamps = [...Array.from({ length: 1000 }, () => START), ...evenly(1000, 1000).map((ms) => ms + 1000)]
    const rate = await knownRate(timestamps)
    within(rate.recordsPerSecond, 2, 0.05, 'records/s')
  })

  it('a reservoir sample of a long stream gives the same rate as every timestamp', async () => {
    const timestamps = evenly(200_000, 50)
    const full = await rateFromSample(sampleOf(timestamps), 100, 'generator-timestamps')
    const sampled = await rateFromSample(sampleOf(timestamps, 5000), 100, 'generator-timestamps')
    assert.ok(isKnownRate(full) && isKnownRate(sampled))
    within(sampled.recordsPerSecond, full.recordsPerSecond, 0.03, 'sampled records/s')
    within(full.recordsPerSecond, 20, 1e-3, 'records/s')
  })

  it('is unknown, with the reason, for too few records, a burst too short to be a rate, or no bytes per record', async () => {
    const empty = await rateFromSample(new TimestampSample(), 100, 'line-timestamps')
    assert.deepEqual(empty, { unknown: 'no line timestamps to measure a rate from' })
    const few = await rateFromSample(sampleOf(evenly(5, HOUR)), 100, 'line-timestamps')
    assert.match(isKnownRate(few) ? '' : few.unknown, /^only 5 records stamped between/)
    // A 260-day file's worth of lines all stamped within a few ms (a replay) is not a rate.
    const burst = await rateFromSample(sampleOf(evenly(1000, 0.5)), 100, 'record-timestamps')
    assert.match(isKnownRate(burst) ? '' : burst.unknown, /too short a span for a rate/)
    const noBytes = rateFromSpan({ fromMs: START, toMs: START + HOUR, records: 100 }, 0, 'broker-offsets')
    assert.match(isKnownRate(noBytes) ? '' : noBytes.unknown, /no records were copied/)
  })

  it('searches a broker-like count (records at or after a time) within a window, counting later stamps as its end', async () => {
    // A count function as the broker answers it: offsets, so it is asked, never given the timestamps.
    const stamps = evenly(3600, 1000)
    let asked = 0
    const countSince = (ms: number): number => {
      asked++
      return stamps.filter((t) => t >= ms).length
    }
    const span = await robustSpan(countSince, { fromMs: START - 2 * HOUR, toMs: START + 2 * HOUR })
    assert.ok(!('unknown' in span))
    within(span.records / ((span.toMs - span.fromMs) / 1000), 1, 1e-3, 'records/s')
    assert.ok(asked < 80, `binary search, not a scan: asked ${asked} times`)
    // A window that ends halfway through: the records after its end count as stamped at the end.
    const half = await robustSpan(countSince, { fromMs: START - HOUR, toMs: START + 1800_000 })
    assert.ok(!('unknown' in half))
    assert.ok(half.toMs <= START + 1800_000)
  })
})
