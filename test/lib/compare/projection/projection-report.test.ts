import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bootstrapRatioIntervals } from '../../../../lib/compare/projection/bootstrap.js'
import type { TargetProjection } from '../../../../lib/compare/projection/chunked-projection.js'
import {
  projectedTargetResults,
  projectionOutcome,
  type ProjectionMeasurements
} from '../../../../lib/compare/projection/projection-report.js'

function projected(storedPerBatch: readonly number[], uncompressedPerBatch: readonly number[]): TargetProjection {
  const storedBytes = storedPerBatch.reduce((a, b) => a + b, 0)
  return {
    batches: storedPerBatch.length,
    records: storedPerBatch.length * 10,
    uncompressedBytes: uncompressedPerBatch.reduce((a, b) => a + b, 0),
    storedBytes,
    batchStoredBytes: storedPerBatch,
    storedBytesByPartition: { 0: storedBytes },
    compressCpuSeconds: 0.5,
    decompressCpuSeconds: 0.25,
    decodeCpuSeconds: 0.125,
    readSeconds: 2,
    digest: 'd'
  }
}

const uncompressedPerBatch = [10_061, 20_061, 30_061, 40_061]
const targets = [
  { spec: { codec: 'none' as const, level: null }, topic: 'logs.none' },
  { spec: { codec: 'zstd' as const, level: 3 }, topic: 'logs.zstd-3' }
]
const measured: ProjectionMeasurements = {
  sampling: null,
  storedBatches: null,
  skippedBatches: 0,
  records: 40,
  uncompressedBytes: 100_244,
  uncompressedPerBatch,
  projected: [
    projected(uncompressedPerBatch, uncompressedPerBatch),
    projected([2061, 4061, 6061, 8061], uncompressedPerBatch)
  ],
  ingestRate: { unknown: 'not measured in this test' },
  partitions: 3,
  replicationFactor: 2,
  meanLingerUsedMs: 12
}
const options = {
  sourceTopic: 'logs',
  sourceDescription: { kind: 'topic' as const, description: 'topic logs' },
  version: '0.1.0',
  consumers: 1,
  threads: 2,
  batching: { lingerMs: 100, batchSizeBytes: 1 << 20 }
}

describe("a projection's report, from what the read and the threads measured", () => {
  it("rates every target against the none target's stored bytes and counts every replica", () => {
    const [none, zstd] = projectedTargetResults(targets, measured)
    assert.equal(none?.ratioVsNone, 1)
    assert.equal(zstd?.target, 'zstd:3')
    assert.equal(zstd?.topic, 'logs.zstd-3 (not created)')
    assert.equal(zstd?.storedBytes, 20_244)
    assert.equal(zstd?.storedBytesAllReplicas, 40_488)
    assert.equal(zstd?.ratioVsNone, 100_244 / 20_244)
    assert.equal(zstd?.ratio, 100_244 / 20_244)
    const alone = projectedTargetResults([targets[1] as (typeof targets)[number]], {
      ...measured,
      projected: [measured.projected[1] as TargetProjection]
    })
    assert.equal(alone[0]?.ratioVsNone, null, 'without a none target there is nothing to rate against')
  })

  it('reports each ratio with its bootstrap interval, each batch share, and no current row without stored batches', () => {
    const rows = projectedTargetResults(targets, measured)
    const outcome = projectionOutcome(options, measured, rows, null, null)
    const { report } = outcome
    assert.equal(report.mode, 'projection')
    assert.equal(report.current, null)
    assert.deepEqual(report.source, {
      kind: 'topic',
      topic: 'logs',
      description: 'topic logs',
      records: 40,
      partitions: 3,
      uncompressedBytes: 100_244,
      ingestRate: measured.ingestRate
    })
    assert.deepEqual(report.settings, { lingerMs: 100, batchSizeBytes: 1 << 20, replicationFactor: 2, consumers: 1 })
    const intervals = bootstrapRatioIntervals(
      uncompressedPerBatch,
      measured.projected.map((p) => p.batchStoredBytes)
    )
    assert.deepEqual(report.projection?.intervals, [
      { target: 'none', ratio: 1, ...intervals[0] },
      { target: 'zstd:3', ratio: 100_244 / 20_244, ...intervals[1] }
    ])
    assert.equal(report.projection?.meanLingerUsedMs, 12)
    assert.equal(report.projection?.threads, 2)
    // Record bytes only: each batch's 61-byte header is left out of both sides (2,000 / 10,000, ...).
    assert.deepEqual(outcome.batchShares?.get('zstd:3'), [0.2, 0.2, 0.2, 0.2])
    assert.deepEqual(outcome.storedBytesByPartition.get('zstd:3'), { 0: 20_244 })
    assert.equal(outcome.partial, false)
  })
})
