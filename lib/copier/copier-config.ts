import { availableParallelism } from 'node:os'
import { formatCodecSpec, type CodecSpec } from '../codecs/index.js'
import type { GroupCoordinator } from '../group/coordinator.js'
import type { GroupProtocol } from '../group/member.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import type { CopierMetrics } from '../metrics/copier-metrics.js'
import type { ReaderMetricsSink } from '../metrics/reader-metrics.js'
import type { Producer } from '../producer/producer.js'
import type { Admin } from 'kafkajs'

/** One destination: a codec and level, and the topic it writes. */
export interface CopyTarget {
  readonly spec: CodecSpec
  readonly topic: string
}

/**
 * What becomes of a record a destination refuses as it is (over that topic's max.message.bytes, or invalid
 * there): stop the copy (Kafka Connect's errors.tolerance=none), count and skip it, or write it to a dead-letter
 * topic. Either of the last two lets source offsets move past it, so a restart does not meet it again.
 */
export const REFUSED_POLICIES = ['fail', 'skip', 'dead-letter'] as const
export type RefusedPolicy = (typeof REFUSED_POLICIES)[number]

/**
 * How copies are batched. 'source': each source batch that can be taken whole becomes one destination batch, its
 * records section decompressed once and compressed again per destination, not re-encoded record by record
 * (batches that cannot, such as compacted ones, are re-batched). 'rebatch': records go into batches of the
 * destinations' own linger.ms and batch.size, as a producer of that configuration would write them.
 */
export const COPY_BATCHING = ['source', 'rebatch'] as const
export type CopyBatching = (typeof COPY_BATCHING)[number]

export interface CopierConfig {
  readonly sourceTopic: string
  readonly groupId: string
  readonly targets: readonly CopyTarget[]
  /** Transactions: each destination holds each source record exactly once for read_committed readers. */
  readonly exactlyOnce: boolean
  /** How often source offsets are committed (after every target acknowledged what came before). */
  readonly commitIntervalMs: number
  /** Stop once every source partition reaches the end offset it had at start (a comparison run). */
  readonly stopAtEnd: boolean
  /** Stop after this many source records (a comparison budget). */
  readonly maxRecords?: number
  /** Stop after this many uncompressed source bytes (key + value + headers). */
  readonly maxBytes?: number
  /**
   * Classic protocol only: how long a dead copier's partitions wait before moving (default 10 s). The new
   * protocol's session is the broker's group.consumer.session.timeout.ms (45 s by default).
   */
  readonly sessionTimeoutMs?: number
  /** -X group.protocol: unset, the new protocol (KIP-848) where the group coordinator serves it, else classic. */
  readonly groupProtocol?: GroupProtocol
  /** -X max.poll.interval.ms: how long this copier may take to commit and give up revoked partitions. */
  readonly rebalanceTimeoutMs?: number
  /** Default 'fail'. 'skip' and 'dead-letter' need at-least-once: a refusal aborts the whole transaction. */
  readonly onRefused?: RefusedPolicy
  /** Where refused records go with 'dead-letter', unchanged, with the error and their origin in headers. */
  readonly deadLetterTopic?: string
  /** What a source batch that cannot be read gets: onRefused's policy unless given. */
  readonly onUnreadable?: RefusedPolicy
  /** squeeze.max.batch.uncompressed.bytes: the reader's default (from its fetch size) when left out. */
  readonly maxBatchUncompressedBytes?: number
  /** Default 'rebatch' (what compare measures); `squeeze copy` defaults to 'source'. */
  readonly batching?: CopyBatching
}

export interface CopierStats {
  sourceRecords: number
  sourceBytes: number
  commits: number
  aborts: number
  /** Copies a destination refused (one per record and destination), skipped or sent to the dead-letter topic. */
  refused: number
  /** Commits the group coordinator refused because this copier no longer owned the partitions (KIP-447 fencing). */
  fencedCommits: number
  /** Source batches that could not be read (over the decompression cap, corrupt), skipped as --on-refused allows. */
  skippedBatches: number
  firstTimestamp: number
  lastTimestamp: number
  /** CPU the source batches' decompression took (once per batch, whatever the number of targets). */
  decompressCpuSeconds: number
}

export interface CopierDeps {
  /** The source's cluster: fetches and the group coordinator's calls go through its connections. */
  readonly cluster: KafkajsCluster
  readonly admin: Admin
  /** One producer for every target (per-topic codecs), transactional when exactly-once. */
  readonly producer: Producer
  readonly log: Logger
  readonly metrics?: CopierMetrics
  /** squeeze_batches_skipped_total and the log-start gap, as every reader reports them. */
  readonly readerMetrics?: ReaderMetricsSink
  readonly onProgress?: (stats: Readonly<CopierStats>) => void
  /** The group's coordinator; by default one on `cluster`. */
  readonly coordinator?: GroupCoordinator
}

/**
 * Producer defaults the copier differs in. With source batching the copier's work is mostly compressing each
 * batch once per target, so one compression thread takes most of it off the event loop, which goes on fetching,
 * decompressing and sending. One thread, not the producer's cores - 1: each thread holds its own copies of the
 * batches it seals (and its own malloc arena) for every target, so peak RSS grows with threads, while one target
 * set's codec work rarely fills more than one more core. On a single core it compresses inline.
 * -X squeeze.compression.threads=N overrides both.
 */
export const COPIER_PRODUCER_DEFAULTS = { compressionThreads: Math.min(1, availableParallelism() - 1) } as const

export function defaultDestination(source: string, spec: CodecSpec): string {
  return `${source}.${formatCodecSpec(spec).replace(':', '-')}`
}

/** A source offset to commit: the next record of `partition` to copy. */
export interface SourceOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}
