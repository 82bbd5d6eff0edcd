import { DEFAULT_READER_CONFIG, PartitionReader } from '../consumer/partition-reader.js'
import type { GroupCoordinator } from '../group/coordinator.js'
import { createMember, type GroupProtocol, type Member } from '../group/member.js'
import type { TopicPartition } from '../group/membership.js'
import type { CopierConfig, CopierDeps } from './copier-config.js'

/**
 * Per source partition and fetch. A fetch's records stay in memory decompressed until copied, and 1 MiB (10 MB
 * once decompressed per partition) raises the copier's peak RSS well above this size's, at the same speed. A larger
 * batch still comes whole (Kafka returns at least one).
 */
const PARTITION_FETCH_BYTES = 256 * 1024
/** The Java client's max.poll.interval.ms: how long a member may take to give up revoked partitions. */
const DEFAULT_REBALANCE_TIMEOUT_MS = 300_000
/** A classic session this short (Kafka's default minimum is 6 s) lets a restarted copier take over quickly. */
const DEFAULT_SESSION_TIMEOUT_MS = 10_000

/** What the copier does when the group changes its assignment. */
export interface AssignmentListener {
  onAssigned(partitions: readonly TopicPartition[]): Promise<void>
  onRevoked(partitions: readonly TopicPartition[]): Promise<void>
  onLost(partitions: readonly TopicPartition[]): Promise<void>
}

/** The copier's member of its group on the source topic, reporting rebalances to the copier's metrics. */
export function joinCopierGroup(
  config: CopierConfig,
  deps: CopierDeps,
  group: { coordinator: GroupCoordinator; protocol: GroupProtocol; listener: AssignmentListener }
): Member {
  const sessionTimeoutMs = config.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS
  const member = createMember(
    {
      groupId: config.groupId,
      topics: [config.sourceTopic],
      protocol: group.protocol,
      rebalanceTimeoutMs: config.rebalanceTimeoutMs ?? DEFAULT_REBALANCE_TIMEOUT_MS,
      sessionTimeoutMs,
      heartbeatIntervalMs: Math.max(100, Math.floor(sessionTimeoutMs / 10))
    },
    {
      coordinator: group.coordinator,
      cluster: deps.cluster,
      log: deps.log,
      listener: group.listener,
      onRebalance: () => {
        deps.metrics?.rebalance()
        deps.metrics?.assigned(member.assignment)
      }
    }
  )
  return member
}

/**
 * The source reader, read_committed, over the partitions the group assigns. maxWaitMs: the long poll is also how
 * long a stop waits for the fetch on the wire. reuseBatchMemory: a batch's records are copied into the
 * destinations' batches before its handler returns (a refused one into memory of its own), so every batch can be
 * decompressed into the same buffer instead of a fresh one.
 */
export function openSourceReader(config: CopierConfig, deps: CopierDeps): PartitionReader {
  const { maxBatchUncompressedBytes } = config
  const { metrics, readerMetrics } = deps
  return new PartitionReader(
    {
      ...DEFAULT_READER_CONFIG,
      topics: [config.sourceTopic],
      partitions: 'assigned',
      untilEnd: false,
      isolation: 'read_committed',
      maxWaitMs: 500,
      partitionMaxBytes: PARTITION_FETCH_BYTES,
      reuseBatchMemory: true,
      ...(maxBatchUncompressedBytes === undefined ? {} : { maxBatchUncompressedBytes })
    },
    {
      cluster: deps.cluster,
      admin: deps.admin,
      log: deps.log,
      ...(metrics === undefined ? {} : { lag: metrics.lag }),
      ...(readerMetrics === undefined ? {} : { metrics: readerMetrics })
    }
  )
}
