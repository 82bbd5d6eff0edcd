import { AssignerProtocol } from 'kafkajs'
import { errorCode, errorMessage } from '../errors.js'
import type { KafkajsClassicGroupCalls, KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import { heartbeatWhile, MemberLoop } from './member-loop.js'
import type { MembershipListener, TopicPartition } from './membership.js'

export interface ClassicMembershipConfig {
  readonly groupId: string
  readonly topics: readonly string[]
  readonly sessionTimeoutMs: number
  readonly rebalanceTimeoutMs: number
  readonly heartbeatIntervalMs: number
}

/** The coordinator calls of the classic protocol; GroupCoordinator gives the real broker. */
export interface ClassicTransport {
  broker(): Promise<KafkajsClassicGroupCalls>
  resetCoordinator(): void
}

const PROTOCOL = 'range'
/** The member must rejoin: a rebalance started, or its generation or id is no longer the group's. */
const REJOIN = new Set(['REBALANCE_IN_PROGRESS'])
const LOST = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'FENCED_INSTANCE_ID'])

/**
 * Kafka's range assignment for the classic protocol: per topic, members sorted by id take consecutive ranges of
 * its partitions, the first `partitions % members` one partition more. Only members subscribed to a topic share it.
 */
export function rangeAssign(
  members: ReadonlyArray<{ memberId: string; topics: readonly string[] }>,
  partitionCounts: ReadonlyMap<string, number>
): Map<string, TopicPartition[]> {
  const assignment = new Map<string, TopicPartition[]>(members.map((m) => [m.memberId, []]))
  for (const [topic, count] of partitionCounts) {
    const subscribed = members
      .filter((m) => m.topics.includes(topic))
      .map((m) => m.memberId)
      .sort()
    const each = Math.floor(count / Math.max(1, subscribed.length))
    const extra = count % Math.max(1, subscribed.length)
    let next = 0
    subscribed.forEach((memberId, i) => {
      const take = each + (i < extra ? 1 : 0)
      for (let p = next; p < next + take; p++) assignment.get(memberId)?.push({ topic, partition: p })
      next += take
    })
  }
  return assignment
}

/**
 * A member of a classic consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) with eager rebalancing:
 * on every rebalance the member gives all its partitions up (onRevoked commits them) before it rejoins, and the
 * leader computes a range assignment. For brokers without the new protocol (before Kafka 4.0).
 */
export class ClassicMembership {
  memberId = ''
  private generationId = -1
  private owned: TopicPartition[] = []
  private readonly loop: MemberLoop

  constructor(
    private readonly config: ClassicMembershipConfig,
    private readonly deps: {
      transport: ClassicTransport
      cluster: KafkajsCluster
      listener: MembershipListener
      log: Logger
      onRebalance?: () => void
    }
  ) {
    this.loop = new MemberLoop(
      { groupId: config.groupId, call: 'group coordinator call' },
      { resetCoordinator: () => deps.transport.resetCoordinator(), log: deps.log }
    )
  }

  /** The generation id: what OffsetCommit checks for a classic group. */
  get memberEpoch(): number {
    return this.generationId
  }

  get assignment(): readonly TopicPartition[] {
    return this.owned
  }

  /** A commit was refused as fenced: before the next heartbeat, drop every partition uncommitted and join again. */
  rejoin(): void {
    this.loop.rejoin()
  }

  /** Joins, then heartbeats (joining again on every rebalance) until `signal` aborts, then leaves the group. */
  async run(signal: AbortSignal): Promise<void> {
    await this.loop.run<void>(
      {
        call: (callSignal) => (this.generationId < 0 ? this.join(callSignal) : this.heartbeat()),
        handle: async () => (this.generationId >= 0 ? 'wait' : 'now'),
        rejoinOn: (err) => this.rejoinOn(errorCode(err)),
        dropFenced: () => this.dropPartitions(true),
        intervalMs: () => this.config.heartbeatIntervalMs,
        leave: () => this.leave()
      },
      signal
    )
  }

  /** A rebalance, or a generation or member the coordinator no longer knows: give everything up and join again. */
  private async rejoinOn(type: string): Promise<boolean> {
    if (!REJOIN.has(type) && !LOST.has(type)) return false
    await this.dropPartitions(LOST.has(type))
    if (type === 'UNKNOWN_MEMBER_ID') this.memberId = ''
    return true
  }

  /** Returns early, without an assignment, when `signal` aborts: run() then leaves the group. */
  private async join(signal: AbortSignal): Promise<void> {
    const broker = await this.deps.transport.broker()
    await this.deps.cluster.addMultipleTargetTopics([...this.config.topics])
    // The coordinator answers a JoinGroup only once every member rejoined or timed out: behind a dead member that
    // is its whole session (45 s by default), longer than a shutdown may take. Leaving ends the wait for the others.
    const joined = await unlessAborted(
      signal,
      broker.joinGroup({
        groupId: this.config.groupId,
        sessionTimeout: this.config.sessionTimeoutMs,
        rebalanceTimeout: this.config.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupProtocols: [
          {
            name: PROTOCOL,
            metadata: AssignerProtocol.MemberMetadata.encode({
              version: 0,
              topics: [...this.config.topics],
              userData: Buffer.alloc(0)
            })
          }
        ]
      })
    )
    if (joined === undefined) return
    this.memberId = joined.memberId
    let groupAssignment: Array<{ memberId: string; memberAssignment: Buffer }> = []
    if (joined.leaderId === joined.memberId) {
      const members = joined.members.map((m) => ({
        memberId: m.memberId,
        topics: AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? []
      }))
      const topics = new Set(members.flatMap((m) => m.topics))
      await this.deps.cluster.addMultipleTargetTopics([...topics])
      const counts = new Map([...topics].map((t) => [t, this.deps.cluster.findTopicPartitionMetadata(t).length]))
      groupAssignment = [...rangeAssign(members, counts)].map(([memberId, tps]) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: byTopic(tps),
          userData: Buffer.alloc(0)
        })
      }))
    }
    const synced = await unlessAborted(
      signal,
      broker.syncGroup({
        groupId: this.config.groupId,
        generationId: joined.generationId,
        memberId: this.memberId,
        groupAssignment
      })
    )
    if (synced === undefined) return
    const decoded = AssignerProtocol.MemberAssignment.decode(synced.memberAssignment)?.assignment ?? {}
    this.generationId = joined.generationId
    const assigned = Object.entries(decoded).flatMap(([topic, partitions]) =>
      partitions.map((partition) => ({ topic, partition }))
    )
    this.deps.log.info(
      { generationId: this.generationId, assigned: assigned.map((tp) => `${tp.topic}:${tp.partition}`) },
      'joined the group (classic protocol)'
    )
    if (assigned.length > 0) await this.deps.listener.onAssigned(assigned)
    this.owned = assigned
    this.deps.onRebalance?.()
  }

  private async heartbeat(): Promise<void> {
    const broker = await this.deps.transport.broker()
    await broker.heartbeat({
      groupId: this.config.groupId,
      groupGenerationId: this.generationId,
      memberId: this.memberId
    })
  }

  /** A heartbeat while the member leaves (see heartbeatWhile); false once its generation or id is gone. */
  private async keepAlive(): Promise<boolean> {
    if (this.generationId < 0) return false
    try {
      await this.heartbeat()
      return true
    } catch (err) {
      const type = errorCode(err)
      if (LOST.has(type)) return false
      this.deps.transport.resetCoordinator()
      this.deps.log.debug({ err: errorMessage(err) }, 'heartbeat while leaving failed')
      return true
    }
  }

  /** Eager rebalancing: commit and give everything up before rejoining, or drop it uncommitted when fenced. */
  private async dropPartitions(lost: boolean): Promise<void> {
    const owned = this.owned
    this.owned = []
    if (owned.length > 0) await (lost ? this.deps.listener.onLost(owned) : this.deps.listener.onRevoked(owned))
    this.generationId = -1
  }

  /** Commits through onRevoked while heartbeats keep the generation, then leaves. */
  private async leave(): Promise<void> {
    if (this.memberId === '') return
    await heartbeatWhile(
      this.dropPartitions(false),
      () => this.keepAlive(),
      () => this.config.heartbeatIntervalMs
    )
    try {
      await (await this.deps.transport.broker()).leaveGroup({ groupId: this.config.groupId, memberId: this.memberId })
    } catch (err) {
      this.deps.log.warn(
        { err: errorMessage(err) },
        'could not leave the group; the coordinator will time the member out'
      )
    }
  }
}

/** `request`'s answer, or undefined as soon as `signal` aborts; a request cannot be taken back, its late answer is dropped. */
async function unlessAborted<T>(signal: AbortSignal, request: Promise<T>): Promise<T | undefined> {
  // Nobody waits for a dropped answer: its failure must not surface as an unhandled rejection.
  void request.catch(() => undefined)
  if (signal.aborted) return undefined
  let onAbort = (): void => undefined
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([request, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

function byTopic(tps: readonly TopicPartition[]): Record<string, number[]> {
  const out: Record<string, number[]> = {}
  for (const { topic, partition } of tps) (out[topic] ??= []).push(partition)
  return out
}
