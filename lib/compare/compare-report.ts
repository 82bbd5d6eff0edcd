import type { CodecName } from '../codecs/index.js'
import type { CurrentBaseline } from './baseline.js'
import type { IngestRate } from './ingest-rate.js'
import type { ProjectionDetails } from './projection/projection-details.js'

/** Did the broker keep the copier's batches byte for byte (CRC and size compared per batch)? */
export interface RecompressionVerdict {
  /** not-checked: a read-only projection wrote nothing, so there is no stored batch to compare. */
  readonly verdict: 'kept' | 'recompressed' | 'unknown' | 'not-checked'
  readonly batchesChecked: number
  readonly batchesRewritten: number
}

/** Everything measured for one destination topic (one codec and level) in a comparison run. */
export interface CompareTargetResult {
  /** As the user named it: `zstd:3`, `none`. */
  readonly target: string
  readonly codec: CodecName
  readonly level: number | null
  readonly topic: string
  readonly records: number
  readonly batches: number
  readonly meanRecordsPerBatch: number
  /** Batch bytes before compression (header plus records), as the copier built them. */
  readonly uncompressedBytes: number
  /** Batch bytes the copier sent after compression. */
  readonly sentBytes: number
  /** Bytes one replica of each partition holds on a broker's disk (DescribeLogDirs): the topic stored once. */
  readonly storedBytes: number
  /** Bytes every replica of every partition holds, summed over the brokers: storedBytes x the replication factor. */
  readonly storedBytesAllReplicas: number
  /** uncompressedBytes / storedBytes. */
  readonly ratio: number
  /** storedBytes of the `none` target / this target's storedBytes; null without a `none` target. */
  readonly ratioVsNone: number | null
  readonly compressCpuSeconds: number
  readonly compressCpuSecondsPerGiB: number
  /** Uncompressed MB (10^6 bytes) compressed per CPU second. */
  readonly compressMBPerSecondPerCore: number
  readonly decompressCpuSeconds: number
  readonly decompressCpuSecondsPerGiB: number
  readonly decodeCpuSecondsPerGiB: number
  /** Records per second the squeeze consumer read and decoded this topic at. */
  readonly consumerRecordsPerSecond: number
  readonly recompression: RecompressionVerdict
  /** Order-insensitive digest of every record (partition, key, value, headers, timestamp): equal across targets. */
  readonly digest: string
}

export interface CompareSource {
  readonly kind: 'topic' | 'file' | 'generate'
  readonly topic: string
  readonly description: string
  readonly records: number
  readonly partitions: number
  readonly uncompressedBytes: number
  /** How fast the source receives bytes (from evidence about the source, never compare's replay), or why unknown. */
  readonly ingestRate: IngestRate
}

/** A target's figures a recommendation is argued from. */
export interface RecommendedPoint {
  readonly target: string
  readonly ratio: number
  readonly compressCpuSecondsPerGiB: number
  readonly storedBytes: number
}

/** Which rule picked the target, with the operator's limits it was picked within. */
export type RecommendationCriterion =
  | { readonly criterion: 'cpu-budget'; readonly cpuBudgetSecondsPerGiB: number; readonly targetRatio: number | null }
  | { readonly criterion: 'target-ratio'; readonly targetRatio: number }
  /** The knee of a Pareto front of `undominated` targets; `nextStep` is the front's next point up, if any. */
  | { readonly criterion: 'best-ratio-per-cpu'; readonly undominated: number; readonly nextStep: RecommendedPoint | null }

/** What to run and why, as data: lib/report/ words it. */
export type Recommendation = RecommendationCriterion & {
  readonly target: string
  readonly chosen: RecommendedPoint
  /** Bytes per day saved against `none`: ingest rate x (1 - 1/ratioVsNone) x (replication factor + consumers); null when the rate is unknown. */
  readonly bytesPerDaySaved: number | null
  /** Bytes saved against `none` per GiB of uncompressed input, same multipliers; null without a `none` target. */
  readonly bytesSavedPerGiB: number | null
}

export interface CompareReport {
  readonly generatedAt: string
  /**
   * copy (the default, absent in older reports): stored bytes as the broker reports them for real copies.
   * projection: read-only, every batch compressed in memory; `projection` says how.
   */
  readonly mode?: 'copy' | 'projection'
  readonly projection?: ProjectionDetails
  readonly squeezeVersion: string
  readonly source: CompareSource
  readonly settings: {
    readonly lingerMs: number
    readonly batchSizeBytes: number
    readonly replicationFactor: number
    readonly consumers: number
  }
  /** What the source stores today, first in every rendering, and each target against it; null when the range held no records. */
  readonly current: CurrentBaseline | null
  readonly targets: readonly CompareTargetResult[]
  readonly recommendation: Recommendation | null
}
