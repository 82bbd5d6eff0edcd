import { formatCodecSpec, type CodecSpec } from '../../codecs/index.js'
import type { AdaptiveLevelSettings } from '../../producer/config.js'
import { ChunkedProjection, projectBatches } from './chunked-projection.js'
import type { BatchingSweep, GrowthStop, LingerAdvice, SweepCell } from './projection-details.js'
import { rebatch, type SourceRecord } from './rebatch.js'
import type { ProjectionPool } from './worker-pool.js'

/** Batches grow by less than this from one batch.size to the next: they have stopped growing. */
const GROWTH_THRESHOLD = 1.02
/** A longer linger.ms is advised only for at least this much more ratio. */
const ADVICE_MIN_GAIN = 1.05

/**
 * Re-batches the same records at every linger.ms x batch.size pair and compresses each batching with every
 * target (sizes only: no read back). One batching at a time is held in memory, a few chunks of it projected at once.
 */
export async function sweepBatching(
  byPartition: ReadonlyMap<number, readonly SourceRecord[]>,
  specs: readonly CodecSpec[],
  grid: { lingerMs: readonly number[]; batchSizeBytes: readonly number[] },
  pool: ProjectionPool,
  adaptive: { adaptiveLevel?: AdaptiveLevelSettings } = {}
): Promise<Omit<BatchingSweep, 'advice'>> {
  const cells: SweepCell[] = []
  for (const lingerMs of grid.lingerMs) {
    for (const batchSizeBytes of grid.batchSizeBytes) {
      const projection = new ChunkedProjection(pool, specs, { format: null, readBack: false, lingerMs, ...adaptive })
      const results = await projectBatches(rebatch(byPartition, { lingerMs, batchSizeBytes }), projection)
      const { records, meanWaitMs: waited } = projection
      results.forEach((r, i) =>
        cells.push({
          target: formatCodecSpec(specs[i] as CodecSpec),
          lingerMs,
          batchSizeBytes,
          ratio: r.storedBytes === 0 ? 0 : r.uncompressedBytes / r.storedBytes,
          batches: r.batches,
          meanRecordsPerBatch: r.batches === 0 ? 0 : records / r.batches,
          meanLingerUsedMs: waited
        })
      )
    }
  }
  return {
    lingerMs: [...grid.lingerMs],
    batchSizeBytes: [...grid.batchSizeBytes],
    cells,
    growthStops: growthStops(cells, grid)
  }
}

function growthStops(
  cells: readonly SweepCell[],
  grid: { lingerMs: readonly number[]; batchSizeBytes: readonly number[] }
): GrowthStop[] {
  const sizes = [...grid.batchSizeBytes].sort((a, b) => a - b)
  const target = cells[0]?.target
  return grid.lingerMs.map((lingerMs) => {
    const perBatch = sizes.map(
      (size) =>
        cells.find((c) => c.target === target && c.lingerMs === lingerMs && c.batchSizeBytes === size)
          ?.meanRecordsPerBatch ?? 0
    )
    const at = perBatch.findIndex(
      (n, i) => i + 1 < perBatch.length && (perBatch[i + 1] as number) < n * GROWTH_THRESHOLD
    )
    return { lingerMs, batchSizeBytes: at === -1 ? null : (sizes[at] as number) }
  })
}

/**
 * "Raise linger.ms": at the run's batch.size, the shortest linger.ms above the current one that gets within 2%
 * of the best ratio the sweep found for `target`, when that is at least 5% more than today's ratio.
 */
export function lingerAdvice(
  cells: readonly SweepCell[],
  target: string,
  current: { lingerMs: number; batchSizeBytes: number; ratio: number; meanLingerUsedMs: number }
): LingerAdvice | null {
  const longer = cells
    .filter((c) => c.target === target && c.batchSizeBytes === current.batchSizeBytes && c.lingerMs > current.lingerMs)
    .sort((a, b) => a.lingerMs - b.lingerMs)
  const best = Math.max(0, ...longer.map((c) => c.ratio))
  const pick = longer.find((c) => c.ratio >= best / GROWTH_THRESHOLD)
  if (pick === undefined || pick.ratio < current.ratio * ADVICE_MIN_GAIN) return null
  return {
    target,
    batchSizeBytes: current.batchSizeBytes,
    fromLingerMs: current.lingerMs,
    toLingerMs: pick.lingerMs,
    fromRatio: current.ratio,
    toRatio: pick.ratio,
    addedLatencyMs: Math.max(0, pick.meanLingerUsedMs - current.meanLingerUsedMs)
  }
}
