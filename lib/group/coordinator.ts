import { ErrorCodes, SqueezeError, isTransient } from '../errors.js'
import {
  CONSUMER_GROUP_HEARTBEAT_API_KEY,
  consumerGroupHeartbeatRequest,
  type HeartbeatRequest,
  type HeartbeatResponse
} from '../kafka/consumer-group-heartbeat.js'
import {
  CONSUMER_GROUP_DESCRIBE_API_KEY,
  consumerGroupDescribeRequest,
  type ConsumerGroupMember
} from '../kafka/consumer-group-describe.js'
import { describeKafkaError, KafkaErrorCode } from '../kafka/error-codes.js'
import {
  COORDINATOR_TYPES,
  type KafkajsBroker,
  type KafkajsClassicGroupCalls,
  type KafkajsGroupDescriber,
  type KafkajsCluster,
  type ProtocolRequest,
  type ProtocolResponse
} from '../kafka/kafkajs-internals.js'
import { commitRefused, offsetCommitRequest, type OffsetCommitArgs } from '../kafka/offset-commit.js'
import { offsetFetchRequest, type OffsetFetchArgs, type OffsetFetchResult } from '../kafka/offset-fetch.js'
import { topicMetadataRequest } from '../kafka/topic-ids.js'
import type { ClassicTransport } from './classic-membership.js'
import { retry, type RetryOptions } from '../retry.js'
import type { MembershipTransport, TopicPartition } from './membership.js'

const COORDINATOR_MOVED = new Set<number>([
  KafkaErrorCode.GROUP_LOAD_IN_PROGRESS,
  KafkaErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE,
  KafkaErrorCode.NOT_COORDINATOR_FOR_GROUP
])
/**
 * Until a deadline rather than ten tries: the open transaction of an exactly-once copier that died under another
 * transactional id keeps its partitions' offsets unstable until the transaction coordinator aborts it, after the
 * producer's transaction timeout (60 s).
 */
const OFFSET_FETCH_RETRY: RetryOptions = {
  deadlineMs: 120_000,
  initialDelayMs: 100,
  maxDelayMs: 2000,
  shouldRetry: isTransient
}

/**
 * The group's coordinator broker, found once through FindCoordinator and looked up again after any failure
 * (a coordinator moves when its broker restarts or the __consumer_offsets partition changes leader).
 */
export class GroupCoordinator implements MembershipTransport, ClassicTransport {
  private found: KafkajsBroker | null = null

  constructor(
    private readonly cluster: KafkajsCluster,
    private readonly groupId: string
  ) {}

  /** Whether the coordinator serves ConsumerGroupHeartbeat (ApiVersions): Kafka 4.0+, or 3.7+ with the feature on. */
  async supportsConsumerProtocol(): Promise<boolean> {
    const broker = await this.broker()
    return broker.versions?.[CONSUMER_GROUP_HEARTBEAT_API_KEY] !== undefined
  }

  heartbeat(request: HeartbeatRequest): Promise<HeartbeatResponse> {
    return this.send(consumerGroupHeartbeatRequest(request))
  }

  async topicNames(topics: readonly string[]): Promise<Map<string, string>> {
    const identities = await this.send(topicMetadataRequest(topics))
    return new Map(identities.filter((t) => t.errorCode === KafkaErrorCode.NONE).map((t) => [t.topicId, t.name]))
  }

  /** Commits the offsets; a partition the coordinator refused throws with its error (STALE_MEMBER_EPOCH, ...). */
  async commit(args: OffsetCommitArgs): Promise<void> {
    const errors = (await this.send(offsetCommitRequest(args))).filter((p) => p.errorCode !== KafkaErrorCode.NONE)
    if (errors.length > 0) throw commitRefused(errors)
  }

  async fetchOffsets(args: OffsetFetchArgs): Promise<OffsetFetchResult> {
    return this.send(offsetFetchRequest(args))
  }

  /**
   * The group's committed offset of each partition (null where none), retried while the coordinator moves or
   * loads, or while a transaction holding offsets of these partitions is still open. A KIP-848 member's fetch
   * is checked against its epoch (`member`); null asks unchecked (a classic member, an admin).
   */
  async committedOffsets(
    member: { memberId: string; memberEpoch: number } | null,
    partitions: readonly TopicPartition[]
  ): Promise<Array<TopicPartition & { offset: number | null }>> {
    const committed = await retry(async () => {
      const answer = await this.fetchOffsets({
        groupId: this.groupId,
        memberId: member?.memberId ?? null,
        memberEpoch: member?.memberEpoch ?? -1,
        partitions
      })
      const failed =
        answer.errorCode !== KafkaErrorCode.NONE
          ? answer.errorCode
          : answer.offsets.find((o) => o.errorCode !== KafkaErrorCode.NONE)?.errorCode
      if (failed !== undefined) {
        if (COORDINATOR_MOVED.has(failed)) this.resetCoordinator()
        throw new SqueezeError(
          ErrorCodes.GROUP,
          `offset fetch for group ${this.groupId}: ${describeKafkaError(failed)}`,
          { retriable: COORDINATOR_MOVED.has(failed) || failed === KafkaErrorCode.UNSTABLE_OFFSET_COMMIT }
        )
      }
      return answer.offsets
    }, OFFSET_FETCH_RETRY)
    return partitions.map((tp) => {
      const found = committed.find((o) => o.topic === tp.topic && o.partition === tp.partition)
      return { ...tp, offset: found === undefined || found.offset < 0 ? null : found.offset }
    })
  }

  /**
   * The group's active members, of either protocol: DescribeGroups describes a classic group, and
   * ConsumerGroupDescribe (where the coordinator serves it) a group of the new protocol, classic members of a
   * group being upgraded included. None for a group that does not exist or is empty.
   */
  async activeMembers(): Promise<ConsumerGroupMember[]> {
    const broker = await this.broker()
    const { groups } = await broker.describeGroups({ groupIds: [this.groupId] })
    const members = new Map((groups.find((g) => g.groupId === this.groupId)?.members ?? []).map((m) => [m.memberId, m]))
    if (broker.versions?.[CONSUMER_GROUP_DESCRIBE_API_KEY] !== undefined) {
      const described = (await this.send(consumerGroupDescribeRequest([this.groupId]))).find(
        (g) => g.groupId === this.groupId
      )
      const failed = described?.errorCode ?? KafkaErrorCode.NONE
      if (failed !== KafkaErrorCode.NONE && failed !== KafkaErrorCode.GROUP_ID_NOT_FOUND) {
        if (COORDINATOR_MOVED.has(failed)) this.resetCoordinator()
        throw new SqueezeError(
          ErrorCodes.GROUP,
          `describing group ${this.groupId}: ${described?.errorMessage ?? describeKafkaError(failed)}`,
          { retriable: COORDINATOR_MOVED.has(failed) }
        )
      }
      for (const m of described?.members ?? []) members.set(m.memberId, m)
    }
    return [...members.values()]
  }

  resetCoordinator(): void {
    this.found = null
  }

  /** The coordinator broker, for the classic protocol's kafkajs-encoded calls. */
  async broker(): Promise<KafkajsBroker & KafkajsClassicGroupCalls & KafkajsGroupDescriber> {
    this.found ??= await this.cluster.findGroupCoordinator({
      groupId: this.groupId,
      coordinatorType: COORDINATOR_TYPES.GROUP
    })
    // kafkajs's broker has these (test/lib/kafka/kafkajs-internals.test.ts checks); squeeze's fakes need not.
    return this.found as KafkajsBroker & KafkajsClassicGroupCalls & KafkajsGroupDescriber
  }

  private async send<T>(call: { request: ProtocolRequest; response: ProtocolResponse<T> }): Promise<T> {
    const broker = await this.broker()
    try {
      return await broker.connectionPool.send(call)
    } catch (err) {
      this.found = null
      throw err
    }
  }
}
