import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Admin } from 'kafkajs'
import { isKnownRate } from '../../../lib/compare/ingest-rate.js'
import { measureIngestRate, startIngestRate } from '../../../lib/compare/run-compare.js'

/** One partition's offsets by timestamp as a broker answers them, for records stamped `stamps`; counts the round trips. */
function brokerOffsets(stamps: readonly number[]): { admin: Admin; asked: () => number } {
  let asked = 0
  const admin = {
    fetchTopicOffsets: async () => {
      asked++
      return [{ partition: 0, offset: String(stamps.length), high: String(stamps.length), low: '0' }]
    },
    fetchTopicOffsetsByTimestamp: async (_topic: string, ms: number) => {
      asked++
      const first = stamps.findIndex((t) => t >= ms)
      return [{ partition: 0, offset: String(first === -1 ? stamps.length : first) }]
    }
  }
  return { admin: admin as unknown as Admin, asked: () => asked }
}

describe("startIngestRate: a whole topic's rate looked up beside the read", () => {
  it('asks the broker before the bytes per record are known, and gives the rate measureIngestRate gives once they are', async () => {
    const now = Date.now()
    // A record a second over the last 40 minutes.
    const stamps = Array.from({ length: 2400 }, (_, i) => now - 2400_000 + i * 1000)
    const options = { sourceTopic: 't', rateEvidence: { kind: 'topic' as const, lookbackMs: 3_600_000 } }
    const early = brokerOffsets(stamps)
    const finish = startIngestRate(options, early.admin)
    // The round trips run while the caller reads: none waits for the bytes per record.
    const deadline = Date.now() + 10_000
    while (early.asked() < 3 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve))
    assert.ok(
      early.asked() >= 3,
      `lookups started before the bytes per record were given: ${early.asked()} round trips`
    )
    const rate = await finish(250, undefined)
    const late = await measureIngestRate(options, brokerOffsets(stamps).admin, 250, undefined)
    assert.ok(isKnownRate(rate) && isKnownRate(late), JSON.stringify({ rate, late }))
    assert.equal(rate.window.source, 'broker-offsets')
    assert.ok(
      Math.abs(rate.bytesPerSecond - 250) < 250 * 0.01,
      `a record a second of 250 bytes: ${rate.bytesPerSecond} B/s`
    )
    assert.ok(
      Math.abs(rate.bytesPerSecond - late.bytesPerSecond) < 250 * 0.01,
      `${rate.bytesPerSecond} vs ${late.bytesPerSecond}`
    )
  })
})
