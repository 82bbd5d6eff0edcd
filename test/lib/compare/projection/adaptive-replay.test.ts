import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../../../lib/codecs/index.js'
import { levelMix } from '../../../../lib/compare/level-mix.js'
import { ChunkedProjection, projectBatches } from '../../../../lib/compare/projection/chunked-projection.js'
import { ChunkProjector } from '../../../../lib/compare/projection/project-target.js'
import { rebatch, type SourceRecord } from '../../../../lib/compare/projection/rebatch.js'
import type { AdaptiveLevelSettings } from '../../../../lib/producer/config.js'
import { targetLabel } from '../../../../lib/report/compare-table.js'
import { withPool } from './with-pool.js'

/** Log-like records, `gapMs` apart: `n` of them over `partitions` partitions. */
function source(n: number, gapMs: number, partitions = 2): Map<number, SourceRecord[]> {
  const byPartition = new Map<number, SourceRecord[]>()
  for (let i = 0; i < n; i++) {
    const value = Buffer.from(
      `2024-05-18T02:40:${String(i % 60).padStart(2, '0')}Z web-${i % 5} GET /api/v1/items/${(i * 7919) % 10_000} 200 ${300 + ((i * 104729) % 9000)}`
    )
    const list = byPartition.get(i % partitions) ?? []
    list.push({ key: null, value, headers: [], timestamp: 1_700_000_000_000 + i * gapMs })
    byPartition.set(i % partitions, list)
  }
  return byPartition
}

/**
 * Projects one zstd:adaptive target on two threads in small chunks (256 KiB, a few batches each), so the replay
 * has to carry its level and simulated thread from chunk to chunk, whichever thread is least loaded.
 */
async function project(
  byPartition: Map<number, SourceRecord[]>,
  lingerMs: number,
  adaptiveLevel?: AdaptiveLevelSettings
): Promise<{ levels: readonly number[]; mix: ReturnType<typeof levelMix> }> {
  const batches = rebatch(byPartition, { lingerMs, batchSizeBytes: 64 * 1024 })
  return withPool(2, async (pool) => {
    const projection = new ChunkedProjection(pool, [parseCodecSpec('zstd:adaptive'), parseCodecSpec('zstd:3')], {
      format: null,
      readBack: false,
      lingerMs,
      chunkBytes: 256 * 1024,
      ...(adaptiveLevel === undefined ? {} : { adaptiveLevel })
    })
    const [p] = await projectBatches(batches, projection)
    assert.ok(p?.levels !== undefined && p.levels.length === batches.length)
    assert.equal(pool.replayCount, 0, "the finished projection's replays were released")
    const sizes = projection.uncompressedPerBatch
    return {
      levels: p.levels,
      mix: levelMix(sizes.map((bytes, i) => ({ level: p.levels?.[i] ?? null, uncompressedBytes: bytes })))
    }
  })
}

describe('compare --mode projection with zstd:adaptive', () => {
  it('at a trickle the replayed producer keeps up and climbs above the default level', async () => {
    // 20 records a second: a batch of 4 records closes by linger.ms every 200 ms and takes microseconds to compress.
    const { levels, mix } = await project(source(1_500, 50, 1), 200)
    assert.equal(levels[0], 3, "starts at zstd's default")
    assert.ok(Math.max(...levels) > 3, `climbed: ${levels.join(',')}`)
    assert.ok(mix.length >= 2)
    assert.ok(Math.abs(mix.reduce((n, m) => n + m.share, 0) - 1) < 1e-9)
  })

  it('records all stamped in the same millisecond are a burst no thread keeps up with: the level comes down to the minimum', async () => {
    const { levels } = await project(source(200_000, 0), 5)
    assert.equal(levels[levels.length - 1], 1, `came down: ${levels.join(',')}`)
  })

  it("squeeze.compression.level.min / .max bound the replayed levels, as they bound the producer's", async () => {
    // The trickle above climbs past 4 when unbounded, and starts at 3.
    const { levels: capped } = await project(source(1_500, 50, 1), 200, { max: 4 })
    assert.ok(Math.max(...capped) <= 4, `capped at 4: ${capped.join(',')}`)
    const { levels: pinned } = await project(source(1_500, 50, 1), 200, { min: 7, max: 7 })
    assert.deepEqual(new Set(pinned), new Set([7]))
  })

  it('squeeze.compression.cpu.budget holds the replayed level at what the budget affords', async () => {
    // A budget no level fits (a nanosecond per GiB) brings the level down to the minimum, where the unbounded trickle climbs.
    const { levels } = await project(source(1_500, 50, 1), 200, { cpuBudgetSecondsPerGiB: 1e-9 })
    assert.equal(levels[levels.length - 1], 1, `came down: ${levels.join(',')}`)
    assert.ok(Math.max(...levels) <= 3, `never climbed: ${levels.join(',')}`)
  })

  it('a thread drops a replay once the pool releases it: threads serve many projections', () => {
    const projector = new ChunkProjector()
    const data = new SharedArrayBuffer(64)
    new Uint8Array(data).set(Buffer.from('0123456789'))
    const slots = [{ partition: 0, start: 0, end: 10, count: 1, firstTimestamp: 1, maxTimestamp: 1 }]
    for (const replayKey of ['1:0', '2:0'])
      projector.project({
        spec: parseCodecSpec('zstd:adaptive'),
        format: null,
        data,
        slots,
        readBack: false,
        adaptive: { lingerMs: 5, replayKey }
      })
    assert.equal(projector.replayCount, 2)
    projector.release('1:0')
    projector.release('2:0')
    assert.equal(projector.replayCount, 0)
  })

  it('the row names the mix: zstd:adaptive (3×41%, 6×59%)', () => {
    assert.equal(
      targetLabel({
        target: 'zstd:adaptive',
        levelMix: [
          { level: 3, share: 0.41 },
          { level: 6, share: 0.59 }
        ]
      }),
      'zstd:adaptive (3×41%, 6×59%)'
    )
    assert.equal(targetLabel({ target: 'zstd:3' }), 'zstd:3')
  })
})
