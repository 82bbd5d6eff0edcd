import { errorMessage, isTransient, SqueezeError } from '../errors.js'
import type { PartitionReader, PartitionPosition, ReaderHandlers } from '../consumer/partition-reader.js'
import type { GroupMetricsSink } from '../metrics/consumer-metrics.js'
import type { Logger } from '../log/logger.js'
import { COORDINATOR_RETRY, retry, sleep } from '../retry.js'
import type { GroupCoordinator } from './coordinator.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { createMember, fetchIdentity, type Member, type MemberConfig } from './member.js'
import type { TopicPartition } from './membership.js'

export interface GroupReaderConfig extends MemberConfig {
  readonly commitIntervalMs: number
}

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
    this.membership = createMember(config, {
      coordinator: deps.coordinator,
      cluster: deps.cluster,
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
    })
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
    await this.deps.reader.assign(await this.deps.coordinator.committedOffsets(fetchIdentity(this.config.protocol, this.membership), partitions))
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
