import { ErrorCodes, SqueezeError, errorMessage, isTransient } from '../errors.js'
import type { PartitionReader, PartitionPosition, ReaderHandlers } from '../consumer/partition-reader.js'
import { describeKafkaError, KafkaErrorCode } from '../kafka/error-codes.js'
import type { GroupMetricsSink } from '../metrics/consumer-metrics.js'
import type { Logger } from '../log/logger.js'
import { COORDINATOR_RETRY, retry, sleep } from '../retry.js'
import type { GroupCoordinator } from './coordinator.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { ClassicMembership } from './classic-membership.js'
import { GroupMembership, type TopicPartition } from './membership.js'

export interface GroupReaderConfig {
  readonly groupId: string
  readonly topics: readonly string[]
  readonly protocol: 'consumer' | 'classic'
  readonly commitIntervalMs: number
  readonly rebalanceTimeoutMs: number
  /** Classic protocol only: the new protocol's session and heartbeat are the broker's (group.consumer.*). */
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
}

/** What the reader needs of a membership, whichever protocol: KIP-848's or the classic one. */
interface Member {
  readonly memberId: string
  /** The member epoch (KIP-848) or generation id (classic) that commits carry. */
  readonly memberEpoch: number
  readonly assignment: readonly TopicPartition[]
  run(signal: AbortSignal): Promise<void>
}

/** What a group member reports beyond the reader's own measurements. */

/**
 * A PartitionReader driven by group membership: it reads only the partitions the coordinator assigns, starts
 * each from the group's committed offset, commits positions every commitIntervalMs and before it gives a
 * partition up (so the next owner starts where it stopped), and leaves the group on shutdown.
 * Commits go one at a time, in order, so a committed offset never goes backwards.
 */
export class GroupReader {
  private commits: Promise<void> = Promise.resolve()
  private readonly membership: Member

  constructor(
    private readonly config: GroupReaderConfig,
    private readonly deps: { reader: PartitionReader; coordinator: GroupCoordinator; cluster: KafkajsCluster; log: Logger; metrics?: GroupMetricsSink }
  ) {
    const common = {
      log: deps.log,
      onRebalance: () => {
        deps.metrics?.rebalance()
        deps.metrics?.assigned(this.membership.assignment)
      },
      listener: {
        onAssigned: (partitions: readonly TopicPartition[]) => this.assign(partitions),
        onRevoked: (partitions: readonly TopicPartition[]) => this.serially(() => this.commit(this.deps.reader.revoke(partitions), 'revoke')),
        onLost: async (partitions: readonly TopicPartition[]) => {
          this.deps.reader.revoke(partitions)
        }
      }
    }
    const { groupId, topics, rebalanceTimeoutMs } = config
    this.membership = config.protocol === 'consumer'
      ? new GroupMembership({ groupId, topics, rebalanceTimeoutMs }, { ...common, transport: deps.coordinator })
      : new ClassicMembership({ groupId, topics, rebalanceTimeoutMs, sessionTimeoutMs: config.sessionTimeoutMs, heartbeatIntervalMs: config.heartbeatIntervalMs }, { ...common, transport: deps.coordinator, cluster: deps.cluster })
  }

  async run(handlers: ReaderHandlers, signal?: AbortSignal): Promise<void> {
    const stop = new AbortController()
    const onAbort = (): void => stop.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    const tasks = [
      this.deps.reader.run(handlers, stop.signal),
      this.membership.run(stop.signal),
      this.commitPeriodically(stop.signal)
    ].map((task) => task.finally(() => stop.abort()))
    try {
      const results = await Promise.allSettled(tasks)
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed !== undefined) throw failed.reason
      await this.commits
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  }

  private async assign(partitions: readonly TopicPartition[]): Promise<void> {
    const committed = await retry(async () => {
      // A KIP-848 member's fetch is checked against its epoch; a classic group's is an unchecked one.
      const member = this.config.protocol === 'consumer' ? { memberId: this.membership.memberId, memberEpoch: this.membership.memberEpoch } : { memberId: null, memberEpoch: -1 }
      const answer = await this.deps.coordinator.fetchOffsets({ groupId: this.config.groupId, ...member, partitions })
      const failed = answer.errorCode !== KafkaErrorCode.NONE ? answer.errorCode : answer.offsets.find((o) => o.errorCode !== KafkaErrorCode.NONE)?.errorCode
      if (failed !== undefined) {
        if (failed === 14 || failed === 15 || failed === 16) this.deps.coordinator.resetCoordinator()
        // UNSTABLE_OFFSET_COMMIT: a transaction holding offsets of these partitions is still open; it ends soon.
        throw new SqueezeError(ErrorCodes.GROUP, `offset fetch for group ${this.config.groupId}: ${describeKafkaError(failed)}`, { retriable: [14, 15, 16, 88].includes(failed) })
      }
      return answer.offsets
    }, COORDINATOR_RETRY)
    const offsetOf = (tp: TopicPartition): number | null => {
      const found = committed.find((o) => o.topic === tp.topic && o.partition === tp.partition)
      return found === undefined || found.offset < 0 ? null : found.offset
    }
    await this.deps.reader.assign(partitions.map((tp) => ({ ...tp, offset: offsetOf(tp) })))
  }

  private async commitPeriodically(signal: AbortSignal): Promise<void> {
    while (await sleep(this.config.commitIntervalMs, signal)) {
      await this.serially(() => this.commit(this.deps.reader.positions(), 'periodic'))
    }
  }

  /** Chains commits: a periodic commit's snapshot is taken only when its turn comes, after any revocation. */
  private serially(work: () => Promise<void>): Promise<void> {
    const next = this.commits.then(work)
    this.commits = next.catch(() => undefined)
    return next
  }

  private async commit(positions: readonly PartitionPosition[], why: 'periodic' | 'revoke'): Promise<void> {
    if (positions.length === 0) return
    const offsets = positions.map(({ topic, partition, position }) => ({ topic, partition, offset: position }))
    try {
      await retry(() => this.deps.coordinator.commit({ groupId: this.config.groupId, generationIdOrMemberEpoch: this.membership.memberEpoch, memberId: this.membership.memberId, offsets }), COORDINATOR_RETRY)
    } catch (err) {
      // A refused commit (stale or fenced epoch) is not fatal: the partitions go to another member, which re-reads
      // from the last accepted commit (at least once). Counted in the log, never a crash loop.
      if (!isTransient(err) && !(err instanceof SqueezeError)) throw err
      this.deps.log.warn({ err: errorMessage(err), why, partitions: positions.length }, 'offset commit failed')
    }
  }
}
