import { formatCodecSpec } from '../../codecs/index.js'
import type { CopyTarget } from '../../copier/copier.js'
import { BATCH } from '../../protocol/batch-layout.js'
import { currentBaseline } from '../baseline.js'
import type { CompareReport, CompareTargetResult, Recommendation } from '../compare-report.js'
import type { IngestRate } from '../ingest-rate.js'
import { levelMix } from '../level-mix.js'
import type { CompareOutcome, CompareRunOptions } from '../run-compare.js'
import type { SourceBatch } from '../source-batches.js'
import type { FormatRow } from '../format-rows.js'
import { bootstrapRatioIntervals } from './bootstrap.js'
import type { TargetProjection } from './chunked-projection.js'
import type { BatchingSweep, ProjectionDetails } from './projection-details.js'
import type { SamplingPlan } from './sample-windows.js'

export interface ProjectionOutcome extends CompareOutcome {
  /** Per target, stored bytes per source partition (what DescribeLogDirs reports for a copy). */
  readonly storedBytesByPartition: ReadonlyMap<string, Readonly<Record<number, number>>>
}

/** The run's settings a projection's report names. */
export interface ProjectionReportOptions extends Pick<
  CompareRunOptions,
  'sourceTopic' | 'sourceDescription' | 'version' | 'consumers' | 'signal'
> {
  readonly threads: number
  readonly batching: { readonly lingerMs: number; readonly batchSizeBytes: number }
}

/** What the read and the threads measured, from which the report is written. */
export interface ProjectionMeasurements {
  readonly sampling: SamplingPlan | null
  /** The stored batches the records were read from, for the current row; null when the read names no such range. */
  readonly storedBatches: readonly SourceBatch[] | null
  readonly skippedBatches: number
  readonly records: number
  readonly uncompressedBytes: number
  /** Uncompressed bytes of every projected batch, in the order the batches closed. */
  readonly uncompressedPerBatch: readonly number[]
  /** Per target, in the order of the run's targets. */
  readonly projected: readonly TargetProjection[]
  readonly ingestRate: IngestRate
  readonly partitions: number
  readonly replicationFactor: number
  readonly meanLingerUsedMs: number
}

/** The targets' result rows, with each one's ratio against the none target where the run has one. */
export function projectedTargetResults(
  targets: readonly CopyTarget[],
  m: Pick<ProjectionMeasurements, 'projected' | 'replicationFactor' | 'uncompressedPerBatch'>
): CompareTargetResult[] {
  const results = targets.map((t, i) =>
    targetResult(t, m.projected[i] as TargetProjection, m.replicationFactor, m.uncompressedPerBatch)
  )
  const noneStored = results.find((r) => r.codec === 'none')?.storedBytes
  return results.map((r) => ({
    ...r,
    ratioVsNone: noneStored === undefined || r.storedBytes === 0 ? null : noneStored / r.storedBytes
  }))
}

/**
 * The copy mode's report and outcome for a projection: the targets' rows as projectedTargetResults gives them,
 * each ratio's bootstrap interval over the batches, the current row from the stored batches, and the per-batch
 * shares and per-partition stored bytes the callers chart.
 */
export function projectionOutcome(
  options: ProjectionReportOptions,
  m: ProjectionMeasurements,
  targets: readonly CompareTargetResult[],
  recommendation: Recommendation | null,
  sweep: BatchingSweep | null,
  formats?: readonly FormatRow[]
): ProjectionOutcome {
  const report: CompareReport = {
    generatedAt: new Date().toISOString(),
    mode: 'projection',
    projection: projectionDetails(options, m, targets, sweep),
    squeezeVersion: options.version,
    source: {
      kind: options.sourceDescription.kind,
      topic: options.sourceTopic,
      description: options.sourceDescription.description,
      records: m.records,
      partitions: m.partitions,
      uncompressedBytes: m.uncompressedBytes,
      ingestRate: m.ingestRate
    },
    settings: {
      lingerMs: options.batching.lingerMs,
      batchSizeBytes: options.batching.batchSizeBytes,
      replicationFactor: m.replicationFactor,
      consumers: options.consumers
    },
    targets,
    recommendation,
    current: currentFromStoredBatches(options, m, targets, recommendation),
    ...(formats === undefined ? {} : { formats })
  }
  const projected = (i: number): TargetProjection => m.projected[i] as TargetProjection
  return {
    report,
    partial: options.signal?.aborted === true,
    sentBytesByTopic: new Map(),
    storedBytesByPartition: new Map(targets.map((r, i) => [r.target, projected(i).storedBytesByPartition])),
    batchShares: new Map(
      targets.map((r, i) => [r.target, batchShares(m.uncompressedPerBatch, projected(i).batchStoredBytes)])
    )
  }
}

type RatioBounds = ReturnType<typeof bootstrapRatioIntervals>[number]

function projectionDetails(
  options: ProjectionReportOptions,
  m: ProjectionMeasurements,
  targets: readonly CompareTargetResult[],
  sweep: BatchingSweep | null
): ProjectionDetails {
  const intervals = bootstrapRatioIntervals(
    m.uncompressedPerBatch,
    m.projected.map((p) => p.batchStoredBytes)
  )
  return {
    threads: options.threads,
    meanLingerUsedMs: m.meanLingerUsedMs,
    sampling: m.sampling,
    intervals: targets.map((r, i) => ({ target: r.target, ratio: r.ratio, ...(intervals[i] as RatioBounds) })),
    sweep
  }
}

/** Today's row, from the stored batches the records were read from; none for a read that names no such range. */
function currentFromStoredBatches(
  options: ProjectionReportOptions,
  m: ProjectionMeasurements,
  targets: readonly CompareTargetResult[],
  recommendation: Recommendation | null
): CompareReport['current'] {
  if (m.storedBatches === null) return null
  return currentBaseline(
    { batches: m.storedBatches, corruptBatches: m.skippedBatches },
    {
      targets,
      recommendation,
      ingestRate: m.ingestRate,
      uncompressedBytesPerRecord: m.records === 0 ? 0 : m.uncompressedBytes / m.records,
      replicationFactor: m.replicationFactor,
      consumers: options.consumers,
      lingerMs: options.batching.lingerMs,
      batchSizeBytes: options.batching.batchSizeBytes
    }
  )
}

const GIB = 1024 ** 3

/** Enough batches to show how a batch's ratio varies, without holding one number per batch of a large topic. */
const MAX_BATCH_SHARES = 4096

/** Each batch's compressed record bytes / uncompressed record bytes, the ratio Java's estimator sees per batch. */
function batchShares(uncompressed: readonly number[], stored: readonly number[]): number[] {
  const step = Math.max(1, Math.ceil(uncompressed.length / MAX_BATCH_SHARES))
  const shares: number[] = []
  for (let i = 0; i < uncompressed.length; i += step) {
    const records = (uncompressed[i] as number) - BATCH.HEADER_BYTES
    if (records > 0 && stored[i] !== undefined) shares.push(((stored[i] as number) - BATCH.HEADER_BYTES) / records)
  }
  return shares
}

/** Every replica of a partition holds the same batches, so all replicas store replicationFactor times one. */
function targetResult(
  target: CopyTarget,
  p: TargetProjection,
  replicationFactor: number,
  uncompressedPerBatch: readonly number[]
): CompareTargetResult {
  const perGiB = (seconds: number): number => (p.uncompressedBytes === 0 ? 0 : seconds / (p.uncompressedBytes / GIB))
  return {
    target: formatCodecSpec(target.spec),
    codec: target.spec.codec,
    level: target.spec.level,
    // No topic is written: the row names what it was projected from.
    topic: `${target.topic} (not created)`,
    records: p.records,
    batches: p.batches,
    meanRecordsPerBatch: p.batches === 0 ? 0 : p.records / p.batches,
    uncompressedBytes: p.uncompressedBytes,
    sentBytes: p.storedBytes,
    storedBytes: p.storedBytes,
    storedBytesAllReplicas: p.storedBytes * replicationFactor,
    ratio: p.storedBytes === 0 ? 0 : p.uncompressedBytes / p.storedBytes,
    ratioVsNone: null,
    compressCpuSeconds: p.compressCpuSeconds,
    compressCpuSecondsPerGiB: perGiB(p.compressCpuSeconds),
    compressMBPerSecondPerCore: p.compressCpuSeconds === 0 ? 0 : p.uncompressedBytes / 1e6 / p.compressCpuSeconds,
    decompressCpuSeconds: p.decompressCpuSeconds,
    decompressCpuSecondsPerGiB: perGiB(p.decompressCpuSeconds),
    decodeCpuSecondsPerGiB: perGiB(p.decodeCpuSeconds),
    consumerRecordsPerSecond: p.records / p.readSeconds,
    recompression: { verdict: 'not-checked', batchesChecked: 0, batchesRewritten: 0 },
    digest: p.digest,
    ...(p.levels === undefined
      ? {}
      : {
          levelMix: levelMix(
            uncompressedPerBatch.map((bytes, i) => ({ level: p.levels?.[i] ?? null, uncompressedBytes: bytes }))
          )
        })
  }
}
