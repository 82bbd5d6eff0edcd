import type { ApplyAs } from '../apply/apply-as.js'
import type { ClientName } from '../apply/client-limits.js'
import type { CurrentCodec } from '../compare/compare-report.js'
import type { FormatRow } from '../compare/format-rows.js'

/** What the cluster says about a topic: read from it, never from flags. */
export interface TopicFacts {
  readonly topic: string
  readonly partitions: number
  readonly replicationFactor: number
  /** retention.ms; -1 keeps records forever. */
  readonly retentionMs: number | null
  /** retention.bytes per partition; -1 has no size limit. */
  readonly retentionBytes: number | null
  readonly cleanupPolicy: string | null
  /** The effective compression.type; anything but `producer` means the broker recompresses every batch. */
  readonly compressionType: string | null
  /** Where compression.type comes from: the topic's own setting, the broker's, or Kafka's default. */
  readonly compressionTypeSource: 'topic' | 'broker' | 'default' | null
  /** Records the topic holds (end minus start offsets, every partition). */
  readonly records: number
  /** Consumer groups (classic and consumer-protocol alike) with a committed offset on the topic. */
  readonly groups: readonly string[]
}

/** One target as projected on the topic's sample. */
export interface AuditTarget {
  readonly target: string
  readonly ratio: number
  /** The 95% bootstrap interval of the ratio over the sample's batches. */
  readonly ratioLow: number
  readonly ratioHigh: number
  /** Stored bytes per record against today's. */
  readonly storedShare: number
  readonly compressCpuSecondsPerGiB: number
  readonly decompressCpuSecondsPerGiB: number
}

/** Today's batches, as the sample found them. */
export interface AuditCurrent {
  readonly codec: string
  readonly codecs: readonly CurrentCodec[]
  readonly ratio: number
  readonly meanRecordsPerBatch: number
  readonly medianBatchBytes: number
  readonly decompressCpuSecondsPerGiB: number
}

/** Money per month, in the prices' currency; null where a price or a figure is missing. */
export interface MonthlyMoney {
  readonly storage: number | null
  readonly transfer: number | null
  readonly cpu: number | null
  readonly net: number | null
}

export interface AuditSavings {
  /** Disk bytes per day saved, all replicas; null without an ingest rate. */
  readonly diskBytesPerDay: number | null
  /** Fetch-traffic bytes per day saved, all groups found. */
  readonly fetchBytesPerDay: number | null
  /** Disk bytes saved once retention has turned over, all replicas; null when retention is unbounded or unknown. */
  readonly steadyStateDiskBytes: number | null
  /**
   * CPU seconds per day the change costs (negative: it saves CPU): the producers' compression and every group's
   * decompression with the target, less today's codec where it was measured.
   */
  readonly cpuSecondsPerDay: number | null
  readonly money: MonthlyMoney | null
}

export type AuditStatus =
  /** Projected; figures and a verdict. */
  | 'audited'
  /** Too few records or batches for a 95% interval: listed, not ranked. */
  | 'too-little-data'
  | 'empty'
  /** The audit's user lacks an ACL on the topic. */
  | 'not-authorized'
  | 'failed'
  /** --max-duration (or an interrupt) ended the pass while this topic was read or projected: no figures. */
  | 'cut'
  /** --max-duration (or an interrupt) ended the pass before this topic started: skipped. */
  | 'not-reached'

export interface AuditTopic {
  readonly topic: string
  readonly status: AuditStatus
  /** Why the topic has no figures (error text, or the ACL it lacks); null when audited. */
  readonly error: string | null
  readonly facts: TopicFacts | null
  /** Figures apply to what compaction keeps, not to everything written. */
  readonly compacted: boolean
  /** The broker recompresses every batch to compression.type: the producers' codec is not what is stored. */
  readonly brokerRecompresses: boolean
  /**
   * Records and record bytes read, today's batches they sit in, and how many re-batched batches each target
   * compressed (every k-th of the sample's, when it has more than the audit projects).
   */
  readonly sample: {
    readonly records: number
    readonly bytes: number
    readonly batches: number
    readonly projectedBatches: number
  } | null
  /** Uncompressed bytes per second; null when unknown. */
  readonly ingestBytesPerSecond: number | null
  readonly ingestRateNote: string | null
  readonly current: AuditCurrent | null
  readonly targets: readonly AuditTarget[]
  /** `keep` or the target to change to, with compare's margin. */
  readonly verdict:
    | { readonly action: 'change'; readonly target: string }
    | { readonly action: 'keep'; readonly best: string | null }
    | null
  readonly savings: AuditSavings | null
  /** The change as settings per client named with --client; null when the verdict is not a change. */
  readonly applyAs: ApplyAs | null
  /**
   * Topics of squeeze's HTTP records (Cap'n Proto HttpRequest): compare's format rows, the projected batches of
   * the recommended target rebuilt as combined log lines and as JSON at its codec and level.
   */
  readonly formats?: readonly FormatRow[]
  /** A cut topic's record bytes read before the cut: how far into its sample it got. */
  readonly cutAfterBytes?: number
  readonly wallSeconds: number
}

export interface Prices {
  readonly storageGiBMonth: number | null
  readonly transferGiB: number | null
  readonly coreHour: number | null
  readonly currency: string
  /** Where the prices come from and when, as the prices file says. */
  readonly source: string | null
}

export interface AuditTotals {
  readonly topics: number
  readonly audited: number
  readonly toChange: number
  readonly failed: number
  /** Topics the end of the pass stopped while they were read or projected. */
  readonly cut: number
  /** Topics not started when the pass ended. */
  readonly notReached: number
  readonly diskBytesPerDay: number
  readonly fetchBytesPerDay: number
  readonly steadyStateDiskBytes: number
  readonly cpuSecondsPerDay: number
  readonly money: MonthlyMoney | null
}

export interface AuditReport {
  readonly generatedAt: string
  readonly squeezeVersion: string
  readonly brokers: readonly string[]
  readonly settings: {
    readonly sampleBytes: number
    readonly targets: readonly string[]
    readonly threads: number
    readonly margin: number
    readonly topicsPattern: string | null
    readonly excludePattern: string | null
    /** --client: the clients each changed topic gets settings for. */
    readonly clients: readonly ClientName[]
    /** --consumers: the fetch multiplier used for every topic instead of the groups found; null: the groups. */
    readonly consumersOverride: number | null
    /** --replication-factor: used for every topic's disk figures instead of its own; null: each topic's own. */
    readonly replicationFactorOverride: number | null
  }
  readonly prices: Prices | null
  /** True when a topic failed, was not readable, was cut or not reached: the report does not cover every topic. */
  readonly partial: boolean
  /** What ended the pass before every topic was done (cut and not-reached topics); null when nothing did. */
  readonly stoppedBy: 'max-duration' | 'interrupt' | null
  readonly wallSeconds: number
  /** Ranked: the largest saving first, then topics without a ranking (too little data, failures). */
  readonly topics: readonly AuditTopic[]
  readonly totals: AuditTotals
}
