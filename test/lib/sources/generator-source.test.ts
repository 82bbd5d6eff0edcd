import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LOG_KINDS, type LogKind } from '../../../lib/formats/index.js'
import { partitionForKey } from '../../../lib/producer/partitioner.js'
import { generateRecords, type Clock } from '../../../lib/sources/generator-source.js'
import { fakeClock } from '../../helpers/fake-clock.js'

const DAY_MS = 86_400_000

async function eachRecord(kind: LogKind, options: { records: number; ratePerSecond?: number; clock: Clock }, check: (r: { key: Buffer | null; timestampMs: number }) => void): Promise<number> {
  let n = 0
  for await (const item of generateRecords({ kind, seed: 1, ...options })) {
    assert.equal(item.kind, 'record')
    if (item.kind === 'record') {
      assert.ok(item.timestampMs !== undefined, 'a generated record carries its own time')
      check({ key: item.key, timestampMs: item.timestampMs })
    }
    n++
  }
  return n
}

describe('generated traffic', () => {
  it('--rate: records carry the clock\'s time, for every kind (2,000 records at 500/s)', async () => {
    for (const kind of LOG_KINDS) {
      const clock = fakeClock(Date.UTC(2026, 5, 1))
      let last = 0
      await eachRecord(kind, { records: 2_000, ratePerSecond: 500, clock }, ({ timestampMs }) => {
        // A record may trail the clock by the rest of its burst (dnsmasq, zeek) and lead it by a retry (zeek: 3 s).
        assert.ok(timestampMs <= clock.ms + 5_000 && timestampMs >= clock.ms - 60_000, `${kind}: ${new Date(timestampMs).toISOString()} at ${new Date(clock.ms).toISOString()}`)
        assert.ok(timestampMs >= last, `${kind}: time went backwards`)
        last = timestampMs
      })
    }
  })

  it('--rate: three days of traffic stay at the clock\'s time, neither running ahead nor falling behind', async () => {
    const start = Date.UTC(2026, 5, 1)
    const clock = fakeClock(start)
    let worst = 0
    // One record every 10 s: the rate does not matter to the property, and 25,920 records keep the test short.
    const n = await eachRecord('http', { records: 3 * 8_640, ratePerSecond: 0.1, clock }, ({ timestampMs }) => {
      worst = Math.max(worst, Math.abs(timestampMs - clock.ms))
    })
    assert.equal(n, 25_920)
    assert.ok(clock.ms - start >= 3 * DAY_MS - 10_000, 'the fake clock ran three days')
    assert.ok(worst <= 1000, `a record was ${worst} ms away from the clock`)
  })

  it('bulk (no --rate): modelled gaps, placed so the run ends at the clock\'s time and never passes it', async () => {
    for (const kind of LOG_KINDS) {
      for (const records of [2_000, 15_000]) {
        const clock = fakeClock(Date.UTC(2026, 5, 1))
        const times: number[] = []
        await eachRecord(kind, { records, clock }, ({ timestampMs }) => times.push(timestampMs))
        const first = times[0] as number
        const last = times[times.length - 1] as number
        // dns-zeek writes a retried query's row up to 3 s after its start.
        assert.ok(last <= clock.ms + 3_000, `${kind} ${records}: ends ${last - clock.ms} ms after now`)
        // Exact when the run is no longer than the sample the span is measured on; an estimate beyond.
        if (records <= 10_000) assert.equal(last, clock.ms, `${kind} ${records}`)
        else assert.ok(clock.ms - last <= 0.2 * (last - first), `${kind} ${records}: ends ${(clock.ms - last) / 3_600_000} h before now, of a ${(last - first) / 3_600_000} h run`)
        const gaps = new Set(times.slice(1, 1000).map((t, i) => t - (times[i] as number)))
        assert.ok(gaps.size > 10, `${kind}: the modelled gaps are kept`)
      }
    }
  })

  it('http records are keyed so that every one of 6 partitions gets a fair share', async () => {
    const counts = new Array<number>(6).fill(0)
    const n = await eachRecord('http', { records: 30_000, clock: fakeClock(Date.UTC(2026, 5, 1)) }, ({ key }) => {
      assert.ok(key !== null)
      counts[partitionForKey(key, 6)]!++
    })
    console.log(`http keys over 6 partitions: ${counts.join(', ')}`)
    for (const count of counts) assert.ok(Math.abs(count / (n / 6) - 1) < 0.1, `partition shares ${counts.join(', ')}`)
  })
})
