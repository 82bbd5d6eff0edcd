import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bootstrapRatioInterval } from '../../../../lib/compare/projection/bootstrap.js'
import { rebatchPartition } from '../../../../lib/compare/projection/rebatch.js'
import { parseBatchSizeList, parseLingerList } from '../../../../lib/compare/projection/sweep-flags.js'
import { BATCH } from '../../../../lib/protocol/batch-layout.js'
import { records } from './source-records.js'

describe("rebatchPartition: the producer's batching replayed on record timestamps", () => {
  it('closes a batch linger.ms after its first record, and reports that wait', () => {
    const batches = rebatchPartition(0, records(10, 10, 100), { lingerMs: 250, batchSizeBytes: 1 << 20 })
    // Records at 0,100,200 | 300,400,500 | ...: a record 300 ms after the batch opened finds it closed.
    assert.deepEqual(
      batches.map((b) => b.count),
      [3, 3, 3, 1]
    )
    assert.deepEqual(
      batches.map((b) => b.waitedMs),
      [250, 250, 250, 0]
    )
    assert.deepEqual(
      batches.map((b) => b.firstTimestamp),
      [1_000_000, 1_000_300, 1_000_600, 1_000_900]
    )
  })

  it('applies batch.size to the uncompressed batch, header included, and never splits a record', () => {
    const batchSizeBytes = BATCH.HEADER_BYTES + 5 * 108
    const batches = rebatchPartition(3, records(12, 100, 0), { lingerMs: 1000, batchSizeBytes })
    assert.ok(batches.every((b) => b.partition === 3))
    assert.equal(
      batches.reduce((n, b) => n + b.count, 0),
      12
    )
    for (const b of batches) assert.ok(BATCH.HEADER_BYTES + b.records.length <= batchSizeBytes, `${b.records.length}`)
    assert.ok(batches.length >= 3 && (batches[0]?.count ?? 0) >= 4, batches.map((b) => b.count).join(','))
  })

  it('a lone record larger than batch.size still gets a batch of its own', () => {
    const batches = rebatchPartition(
      0,
      [
        ...records(1, 10, 0),
        { key: null, value: Buffer.alloc(5000), headers: [], timestamp: 1_000_000 },
        ...records(1, 10, 0)
      ],
      { lingerMs: 1000, batchSizeBytes: 1024 }
    )
    assert.deepEqual(
      batches.map((b) => b.count),
      [1, 1, 1]
    )
  })

  it('linger.ms 0 still batches records stamped in the same millisecond; an out-of-order timestamp joins the open batch', () => {
    const same = rebatchPartition(0, records(4, 10, 0), { lingerMs: 0, batchSizeBytes: 1 << 20 })
    assert.deepEqual(
      same.map((b) => b.count),
      [4]
    )
    const late = rebatchPartition(
      0,
      [...records(2, 10, 50), { key: null, value: Buffer.from('x'), headers: [], timestamp: 999_000 }],
      { lingerMs: 100, batchSizeBytes: 1 << 20 }
    )
    assert.deepEqual(
      late.map((b) => b.count),
      [3]
    )
  })
})

describe('bootstrapRatioInterval', () => {
  it('brackets the ratio, is reproducible, and narrows to a point when every batch has the same ratio', () => {
    const unc = Array.from({ length: 200 }, (_, i) => 1000 + (i % 7) * 100)
    const stored = unc.map((u, i) => Math.round(u / (i < 100 ? 2 : 6)))
    const ratio = unc.reduce((a, b) => a + b) / stored.reduce((a, b) => a + b)
    const ci = bootstrapRatioInterval(unc, stored)
    assert.ok(ci.low < ratio && ratio < ci.high, `${ci.low} < ${ratio} < ${ci.high}`)
    assert.deepEqual(bootstrapRatioInterval(unc, stored), ci)
    const flat = bootstrapRatioInterval([100, 200, 300], [50, 100, 150])
    assert.deepEqual(flat, { low: 2, high: 2 })
  })
})

describe('--linger-ms and --batch-size lists', () => {
  it('parses units and refuses what Kafka would refuse, in one line', () => {
    assert.deepEqual(parseLingerList('0,5,50,200,1000'), [0, 5, 50, 200, 1000])
    assert.deepEqual(parseBatchSizeList('16KiB,128KiB,1MiB,512'), [16384, 131072, 1048576, 512])
    assert.throws(() => parseLingerList('5,-1'), /--linger-ms takes whole milliseconds/)
    assert.throws(() => parseBatchSizeList('16KiB,2GiB'), /--batch-size takes sizes from 64 bytes to 64MiB/)
    assert.throws(() => parseBatchSizeList('16KiB,16384'), /names the same value twice/)
  })
})
