import { LEVEL_RANGES, type CodecName } from '../codecs/index.js'
import type {
  CompareTargetResult,
  CurrentBaseline,
  CurrentCodec,
  CurrentRow,
  Recommendation,
  SavingVsCurrent,
  VerdictVsCurrent,
  BatchingLimit,
  LargerBatchesToday
} from './compare-report.js'
import { isKnownRate, type IngestRate } from './ingest-rate.js'
import { paretoFront } from './pareto.js'
import type { SourceBatch, SourceBatchScan } from './source-batches.js'

export const CURRENT_LABEL: CurrentRow['label'] = 'current (as stored)'
/**
 * Below either figure the producers' batches, not the codec, limit what compression can do: the field report's
 * nginx error logs shrank 8x once batched for 1 s (the Kafka compression field report the project started from).
 */
export const SMALL_BATCH_MEDIAN_BYTES = 16 * 1024
export const FEW_RECORDS_PER_BATCH = 50
/** Today's batches at least this many times the targets' records per batch: said next to the verdict. */
export const LARGER_BATCHES_FACTOR = 10
/** A change must store at most (1 - this) of what is stored now: a smaller gain is not worth reconfiguring producers for. */
export const CHANGE_MARGIN = 0.1

const GIB = 1024 ** 3
const SECONDS_PER_DAY = 86_400

export type {
  BatchSizeSpread,
  CurrentCodec,
  CurrentRow,
  SavingVsCurrent,
  SharePoint,
  VerdictVsCurrent,
  BatchingLimit,
  CurrentBaseline,
  LargerBatchesToday
} from './compare-report.js'

export interface BaselineContext {
  readonly targets: readonly CompareTargetResult[]
  readonly recommendation: Recommendation | null
  readonly ingestRate: IngestRate
  /** The targets' uncompressed bytes per record: the scale of the ingest rate and of "per GiB of input". */
  readonly uncompressedBytesPerRecord: number
  readonly replicationFactor: number
  readonly consumers: number
  readonly lingerMs: number
  readonly batchSizeBytes: number
}

/** The baseline from the source's stored batches; null when the range holds no records to compare per record. */
export function currentBaseline(scan: SourceBatchScan, context: BaselineContext): CurrentBaseline | null {
  const row = currentRow(scan, context)
  if (row === null) return null
  const savings = context.targets.map((t) => savingVsCurrent(row, t, context))
  const v = verdict(savings, context)
  return {
    row,
    savings,
    verdict: v,
    batchingLimit: batchingLimit(row, savings, v, context),
    largerBatchesToday: largerBatchesToday(row, context)
  }
}

function currentRow(scan: SourceBatchScan, context: BaselineContext): CurrentRow | null {
  const data = scan.batches.filter((b) => b.codec !== null)
  const records = sum(data, (b) => b.records)
  if (records === 0) return null
  const storedBytes = sum(scan.batches, (b) => b.storedBytes)
  const uncompressedBytes = sum(data, (b) => b.uncompressedBytes)
  const codecs = codecShares(data)
  const none = context.targets.find((t) => t.codec === 'none')
  const perRecord = storedBytes / records
  const sizes = Float64Array.from(data, (b) => b.storedBytes).sort()
  return {
    label: CURRENT_LABEL,
    codec: codecs.length === 1 ? (codecs[0] as CurrentCodec).codec : 'mix',
    codecs,
    records,
    batches: data.length,
    meanRecordsPerBatch: records / data.length,
    batchBytes: { p10: quantile(sizes, 0.1), median: quantile(sizes, 0.5), p90: quantile(sizes, 0.9) },
    storedBytes,
    uncompressedBytes,
    ratio: uncompressedBytes / storedBytes,
    ratioVsNone: none === undefined || none.records === 0 ? null : none.storedBytes / none.records / perRecord,
    equivalentRatio: context.uncompressedBytesPerRecord / perRecord,
    decompressCpuSecondsPerGiB: sum(data, (b) => b.decompressCpuSeconds) / (uncompressedBytes / GIB),
    corruptBatches: scan.corruptBatches
  }
}

function codecShares(batches: readonly SourceBatch[]): CurrentCodec[] {
  const byCodec = new Map<string, { batches: number; records: number; storedBytes: number }>()
  for (const b of batches) {
    const c = byCodec.get(b.codec as string) ?? { batches: 0, records: 0, storedBytes: 0 }
    c.batches++
    c.records += b.records
    c.storedBytes += b.storedBytes
    byCodec.set(b.codec as string, c)
  }
  return [...byCodec]
    .map(([codec, c]) => ({ codec, ...c }))
    .sort((a, b) => b.storedBytes - a.storedBytes || a.codec.localeCompare(b.codec))
}

function savingVsCurrent(row: CurrentRow, t: CompareTargetResult, context: BaselineContext): SavingVsCurrent {
  const currentPerRecord = row.storedBytes / row.records
  const targetPerRecord = t.records === 0 ? Number.NaN : t.storedBytes / t.records
  const savedPerRecord = currentPerRecord - targetPerRecord
  const recordsPerGiB = context.uncompressedBytesPerRecord > 0 ? GIB / context.uncompressedBytesPerRecord : Number.NaN
  const recordsPerDay = isKnownRate(context.ingestRate) ? context.ingestRate.recordsPerSecond * SECONDS_PER_DAY : null
  const { replicationFactor: rf, consumers } = context
  return {
    target: t.target,
    storedShare: targetPerRecord / currentPerRecord,
    storedBytesPerDaySaved: recordsPerDay === null ? null : recordsPerDay * savedPerRecord * rf,
    fetchBytesPerDaySaved: recordsPerDay === null ? null : recordsPerDay * savedPerRecord * consumers,
    storedBytesSavedPerGiB: recordsPerGiB * savedPerRecord * rf,
    fetchBytesSavedPerGiB: recordsPerGiB * savedPerRecord * consumers
  }
}

/**
 * Change to the recommended target when it stores at most (1 - CHANGE_MARGIN) of today's bytes; else to the
 * cheapest point of the ratio-vs-CPU front that does; else keep what is there, naming the front's best.
 */
function verdict(savings: readonly SavingVsCurrent[], context: BaselineContext): VerdictVsCurrent {
  return verdictOver(savings, context.targets, context.recommendation)
}

/**
 * The verdict over some of the targets, with `recommendation` the rule's pick among them: what the audit asks per
 * client, over the rows each client can write.
 */
export function verdictOver(
  savings: readonly SavingVsCurrent[],
  targets: readonly CompareTargetResult[],
  recommendation: Recommendation | null
): VerdictVsCurrent {
  const shareOf = new Map(savings.map((s) => [s.target, s.storedShare]))
  const ranked = targets.filter(
    (t) => t.codec !== 'none' && t.recompression.verdict !== 'recompressed' && Number.isFinite(shareOf.get(t.target))
  )
  const front = paretoFront(ranked)
  const worthIt = (target: string): boolean => (shareOf.get(target) as number) <= 1 - CHANGE_MARGIN
  const recommended = recommendation?.target
  const pick =
    recommended !== undefined && shareOf.has(recommended) && worthIt(recommended)
      ? recommended
      : front.find((t) => worthIt(t.target))?.target
  if (pick !== undefined)
    return { action: 'change', target: pick, storedShare: shareOf.get(pick) as number, margin: CHANGE_MARGIN }
  const best = [...front].sort((a, b) => (shareOf.get(a.target) as number) - (shareOf.get(b.target) as number))[0]
  return {
    action: 'keep',
    margin: CHANGE_MARGIN,
    best: best === undefined ? null : { target: best.target, storedShare: shareOf.get(best.target) as number }
  }
}

function batchingLimit(
  row: CurrentRow,
  savings: readonly SavingVsCurrent[],
  v: VerdictVsCurrent,
  context: BaselineContext
): BatchingLimit | null {
  if (row.batchBytes.median >= SMALL_BATCH_MEDIAN_BYTES && row.meanRecordsPerBatch >= FEW_RECORDS_PER_BATCH) return null
  const sameCodec = row.codec === 'mix' ? [] : context.targets.filter((t) => t.codec === row.codec)
  // Producers' default level when several levels were measured: what today's producers most likely run (the batch does not say).
  const defaultLevel = LEVEL_RANGES[row.codec as CodecName]?.default ?? null
  const rebatchedTarget = sameCodec.find((t) => t.level === defaultLevel) ?? sameCodec[0]
  const rebatched =
    rebatchedTarget === undefined ? null : (savings.find((s) => s.target === rebatchedTarget.target) ?? null)
  const named = v.action === 'change' ? v.target : v.best?.target
  const against = savings.find((s) => s.target === named)
  return {
    medianBatchBytes: row.batchBytes.median,
    meanRecordsPerBatch: row.meanRecordsPerBatch,
    thresholds: { medianBatchBytes: SMALL_BATCH_MEDIAN_BYTES, recordsPerBatch: FEW_RECORDS_PER_BATCH },
    lingerMs: context.lingerMs,
    batchSizeBytes: context.batchSizeBytes,
    rebatched: rebatched === null ? null : { target: rebatched.target, storedShare: rebatched.storedShare },
    split:
      rebatched === null || against === undefined
        ? null
        : {
            target: against.target,
            fromBatching: 1 - rebatched.storedShare,
            fromCodec: rebatched.storedShare - against.storedShare
          }
  }
}

function largerBatchesToday(row: CurrentRow, context: BaselineContext): LargerBatchesToday | null {
  const batched = context.targets.filter((t) => t.batches > 0)
  if (batched.length === 0) return null
  const targetRecordsPerBatch = Math.max(...batched.map((t) => t.meanRecordsPerBatch))
  const factor = row.meanRecordsPerBatch / targetRecordsPerBatch
  if (!(factor >= LARGER_BATCHES_FACTOR)) return null
  return {
    currentRecordsPerBatch: row.meanRecordsPerBatch,
    targetRecordsPerBatch,
    factor,
    lingerMs: context.lingerMs,
    batchSizeBytes: context.batchSizeBytes
  }
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((n, item) => n + of(item), 0)
}
