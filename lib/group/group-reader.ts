import { ErrorCodes, errorCode, errorMessage, isTransient, SqueezeError } from '../errors.js'
import type { PartitionReader, PartitionPosition, ReaderHandlers } from '../consumer/partition-reader.js'
import type { GroupMetricsSink } from '../metrics/consumer-metrics.js'
import type { Logger } from '../log/logger.js'
import { COORDINATOR_RETRY, retry, sleep } from '../retry.js'
import type { GroupCoordinator } from './coordinator.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { commitAsMember, createMember, fetchIdentity, type Member, type MemberConfig } from './member.js'
import type { TopicPartition } from './membership.js'

export interface GroupReaderConfig extends MemberConfig {
  readonly commitIntervalMs: number
}

export interface GroupReaderDeps {
  readonly reader: PartitionReader
  readonly coordinator: GroupCoordinator
  readonly cluster: KafkajsCluster
  readonly log: Logger
  readonly metrics?: GroupMetricsSink
  /**
   * Awaited after a commit's positions are taken and before they are sent: what the handlers still owe for the
   * records before those positions (dead-letter copies) is done first. A throw ends the read uncommitted.
   */
  readonly settle?: () => Promise<void>
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
  private readonly stop = new AbortController()

  constructor(
    private readonly config: GroupReaderConfig,
    private readonly deps: GroupReaderDeps
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
        onRevoked: (partitions: readonly TopicPartition[]) =>
          this.serially(() => this.commit(this.deps.reader.revoke(partitions), 'revoke')),
        onLost: async (partitions: readonly TopicPartition[]) => {
          this.deps.reader.revoke(partitions)
        }
      }
    })
  }

  async run(handlers: ReaderHandlers, signal?: AbortSignal): Promise<void> {
    const { stop } = this
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
    await this.deps.reader.assign(
      await this.deps.coordinator.committedOffsets(fetchIdentity(this.config.protocol, this.membership), partitions)
    )
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

  /**
   * Commits the positions as this member. Refused as fenced (the coordinator gave the partitions to another
   * member, or no longer knows this one), the partitions are dropped uncommitted and the member joins again: their
   * next owner re-reads from the last accepted commit. A coordinator out of reach after the retries is logged, and
   * the next commit carries these offsets; any other refusal ends the read with its one-line error.
   */
  private async commit(positions: readonly PartitionPosition[], why: 'periodic' | 'revoke'): Promise<void> {
    if (positions.length === 0) return
    await this.deps.settle?.()
    const offsets = positions.map(({ topic, partition, position }) => ({ topic, partition, offset: position }))
    const { coordinator, log } = this.deps
    try {
      await commitAsMember(
        this.membership,
        ({ memberId, generationId }) =>
          retry(
            () =>
              coordinator.commit({
                groupId: this.config.groupId,
                generationIdOrMemberEpoch: generationId,
                memberId,
                offsets
              }),
            COORDINATOR_RETRY
          ),
        () => this.stop.signal.aborted
      )
    } catch (err) {
      if (errorCode(err) === ErrorCodes.GROUP_FENCED) {
        log.warn(
          { err: errorMessage(err), why, partitions: positions.length },
          'offset commit refused: this member no longer owns its partitions; dropping them and rejoining'
        )
        this.membership.rejoin()
        return
      }
      if (!isTransient(err))
        throw new SqueezeError(ErrorCodes.GROUP, `group ${this.config.groupId}: ${errorMessage(err)}`, { cause: err })
      log.warn(
        { err: errorMessage(err), why, partitions: positions.length },
        'offset commit failed; the next commit carries these offsets'
      )
    }
  }
}
