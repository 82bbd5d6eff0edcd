import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  javaBatchSizeFor,
  javaBufferMemory,
  javaRecordsPerBatch,
  nextJavaEstimate,
  simulateJavaBatching,
  type JavaRun
} from '../../../lib/apply/java-estimator.js'

describe("Java's compression-ratio estimator", () => {
  it('comes down 0.005 after a better batch, never below it; goes up at least 0.05 after a worse one', () => {
    assert.equal(nextJavaEstimate(1, 0.2), Math.fround(0.995))
    assert.equal(nextJavaEstimate(0.2, 0.198), Math.fround(0.198), 'not below the observed ratio')
    assert.equal(nextJavaEstimate(0.2, 0.1), Math.fround(Math.fround(0.2) - Math.fround(0.005)), 'in float arithmetic')
    assert.equal(nextJavaEstimate(0.2, 0.21), Math.fround(Math.fround(0.2) + Math.fround(0.05)))
    assert.equal(nextJavaEstimate(0.2, 0.3), Math.fround(0.3), 'straight to a much worse ratio')
    assert.equal(nextJavaEstimate(0.25, 0.25), Math.fround(0.25))
  })

  it('fills a batch while header + trunc(records x size x estimate x 1.05) + the next record fits', () => {
    // 100-byte records at estimate 1 count 105 each: after 8, 61 + 840 + 100 = 1001 <= 1061 takes a 9th;
    // after 9, 61 + 945 + 100 = 1106 > 1061 refuses the 10th.
    assert.equal(javaRecordsPerBatch(1061, 100, 1), 9)
    // At exactly 1106 the 10th still fits.
    assert.equal(javaRecordsPerBatch(1106, 100, 1), 10)
    assert.equal(javaRecordsPerBatch(100, 100, 1), 1, 'the first record always goes in')
    // At estimate 0.5 a record counts 52.5: after 17, 61 + 892 + 100 = 1053 <= 1061; after 18, 61 + 945 + 100.
    assert.equal(javaRecordsPerBatch(1061, 100, 0.5), 18)
  })

  it('carries the estimate from batch to batch over a run', () => {
    // Batch 1 at estimate 1: 9 records, compresses to 0.5, estimate 0.995. Batch 2: a record counts 104.475,
    // 61 + trunc(8 x 104.475) + 100 = 996 fits a 9th, 1100 does not: 9 records, compresses to 1.2, estimate
    // jumps to 1.2. Batch 3: a record counts 126, the last 8 of the 26 records fit.
    const run: JavaRun = { records: 26, recordBytes: 100, compressedShares: [0.5, 1.2] }
    const sim = simulateJavaBatching(1061, run)
    assert.equal(sim.batches, 3)
    assert.equal(sim.meanBatchBytes, (3 * 61 + 26 * 100) / 3)
    assert.equal(sim.finalEstimate, Math.fround(Math.fround(1.2) - Math.fround(0.005)))
  })

  it('opens a batch at the estimate of lagBatches batches earlier when closed batches wait undrained', () => {
    // As above, but batch 3 opens at the estimate before batch 2's 1.2 was fed back, 0.995: 9 records, not 8,
    // so 27 records make 3 batches instead of 9 + 9 + 8 + 1.
    const run: JavaRun = { records: 27, recordBytes: 100, compressedShares: [0.5, 1.2] }
    assert.equal(simulateJavaBatching(1061, run).batches, 4)
    assert.equal(simulateJavaBatching(1061, run, 1).batches, 3)
    assert.equal(javaBufferMemory(35_000, 3), (3 + 5) * 35_000, 'one open batch per partition and five undrained')
  })

  it('picks the smallest batch.size whose batches average the aimed size over the run', () => {
    const run: JavaRun = { records: 200_000, recordBytes: 200, compressedShares: [0.17, 0.16, 0.18, 0.165] }
    const aimed = 131_072
    const size = javaBatchSizeFor(aimed, run)
    assert.ok(simulateJavaBatching(size, run).meanBatchBytes >= aimed)
    assert.ok(simulateJavaBatching(size - 1, run).meanBatchBytes < aimed)
    // The estimate settled at the mean ratio would give about aimed x 1.05 x 0.169: the first batches, made
    // while the estimate comes down from 1, and the jumps after worse batches both need a larger batch.size.
    assert.ok(size > aimed * 1.05 * 0.169, `batch.size ${size}`)
  })

  it('needs less over a longer run, where the first batches weigh less', () => {
    const short: JavaRun = { records: 100_000, recordBytes: 200, compressedShares: [0.2] }
    const long: JavaRun = { ...short, records: 10_000_000 }
    const settled = Math.ceil(65_536 * 1.05 * 0.2)
    assert.ok(javaBatchSizeFor(65_536, long) < javaBatchSizeFor(65_536, short))
    assert.ok(javaBatchSizeFor(65_536, long) < settled * 1.1, 'a long run comes near the settled estimate')
  })
})
