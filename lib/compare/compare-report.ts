import type { CodecName } from '../codecs/index.js'
import type { FormatRow } from './format-rows.js'
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
  /** codec:adaptive only: each level used, lowest first, with its share of the uncompressed bytes. */
  readonly levelMix?: readonly LevelShare[]
}

export interface LevelShare {
  readonly level: number
  readonly share: number
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
  | {
      readonly criterion: 'best-ratio-per-cpu'
      readonly undominated: number
      readonly nextStep: RecommendedPoint | null
    }

/** What to run and why, as data: lib/report/ words it. */
export type Recommendation = RecommendationCriterion & {
  readonly target: string
  readonly chosen: RecommendedPoint
  /**
   * Bytes per day saved against `none`: ingest rate x (1 - 1/ratioVsNone) x (replication factor + consumers), disk
   * and fetch traffic together (lib/compare/savings.ts has them apart); null when the rate is unknown.
   */
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
  /**
   * HTTP sources copied: the recommended target's batches holding the records as combined log lines and as JSON
   * instead of Cap'n Proto, what each stores and costs to read (absent otherwise).
   */
  readonly formats?: readonly FormatRow[]
}

// The "current (as stored)" baseline's shape (lib/compare/baseline.ts computes it).
/** Stored bytes per batch, as the broker holds them. */
export interface BatchSizeSpread {
  readonly p10: number
  readonly median: number
  readonly p90: number
}

export interface CurrentCodec {
  readonly codec: string
  readonly batches: number
  readonly records: number
  readonly storedBytes: number
}

/** What the source range costs today, as its own producers batched and compressed it. */
export interface CurrentRow {
  readonly label: 'current (as stored)'
  /** The one codec found in the batches' attributes, or `mix` when producers differ (see codecs). */
  readonly codec: string
  /** Every codec found, most stored bytes first. */
  readonly codecs: readonly CurrentCodec[]
  readonly records: number
  readonly batches: number
  readonly meanRecordsPerBatch: number
  readonly batchBytes: BatchSizeSpread
  /** Sum of the source batches' sizes: exactly what the broker stores for them (one replica). */
  readonly storedBytes: number
  /** The source batches decompressed (header plus records). */
  readonly uncompressedBytes: number
  /** uncompressedBytes / storedBytes: how well today's batches compress their own bytes. */
  readonly ratio: number
  /** `none` target's stored bytes per record / current's; null without a `none` target. */
  readonly ratioVsNone: number | null
  /** Where current sits on the targets' ratio axis: the targets' uncompressed bytes per record / current's stored bytes per record. */
  readonly equivalentRatio: number
  /** CPU a consumer spends decompressing today's batches, per GiB decompressed. */
  readonly decompressCpuSecondsPerGiB: number
  /** Source batches that did not read and are left out. */
  readonly corruptBatches: number
}

/**
 * One target against current, per record (the copy and the source range hold the same records): its share of
 * today's stored bytes, and what it saves on disk (x replication factor) and in fetch traffic (x consumers).
 */
export interface SavingVsCurrent {
  readonly target: string
  /** Target's stored bytes / current's: "stores 0.62x of what you store now". */
  readonly storedShare: number
  /** Null when no trustworthy ingest rate exists: see the per-GiB figures. */
  readonly storedBytesPerDaySaved: number | null
  readonly fetchBytesPerDaySaved: number | null
  /** Per GiB of uncompressed input. */
  readonly storedBytesSavedPerGiB: number
  readonly fetchBytesSavedPerGiB: number
}

export interface SharePoint {
  readonly target: string
  readonly storedShare: number
}

/** The recommendation against current: change to a target, or keep what is there when none beats it by the margin. */
export type VerdictVsCurrent =
  | { readonly action: 'change'; readonly target: string; readonly storedShare: number; readonly margin: number }
  | { readonly action: 'keep'; readonly margin: number; readonly best: SharePoint | null }

/** Today's batches are small: the targets' re-batching, and how much of a gain batching alone gives. */
export interface BatchingLimit {
  readonly medianBatchBytes: number
  readonly meanRecordsPerBatch: number
  readonly thresholds: { readonly medianBatchBytes: number; readonly recordsPerBatch: number }
  /** What squeeze's targets were re-batched at. */
  readonly lingerMs: number
  readonly batchSizeBytes: number
  /** The current codec re-batched alone; null when current is a mix or no target has its codec. */
  readonly rebatched: SharePoint | null
  /** A target's saving against current, as shares of current's bytes: from re-batching, and from the codec on top. */
  readonly split: { readonly target: string; readonly fromBatching: number; readonly fromCodec: number } | null
}

/**
 * Today's batches hold many times the records of squeeze's re-batched ones: the targets' ratios are then for
 * smaller batches than the topic's, and the comparison with current is one of batchings as much as of codecs.
 */
export interface LargerBatchesToday {
  readonly currentRecordsPerBatch: number
  /** The most records per batch any target's batching reached. */
  readonly targetRecordsPerBatch: number
  readonly factor: number
  readonly lingerMs: number
  readonly batchSizeBytes: number
}

export interface CurrentBaseline {
  readonly row: CurrentRow
  /** One per target, in the targets' order. */
  readonly savings: readonly SavingVsCurrent[]
  readonly verdict: VerdictVsCurrent
  readonly batchingLimit: BatchingLimit | null
  readonly largerBatchesToday: LargerBatchesToday | null
}
