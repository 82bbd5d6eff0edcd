import { ErrorCodes, SqueezeError } from '../errors.js'
import { CONSUMER_GROUP_HEARTBEAT_API_KEY, consumerGroupHeartbeatRequest, type HeartbeatRequest, type HeartbeatResponse } from '../kafka/consumer-group-heartbeat.js'
import { describeKafkaError, KafkaErrorCode } from '../kafka/error-codes.js'
import { COORDINATOR_TYPES, type KafkajsBroker, type KafkajsClassicGroupCalls, type KafkajsCluster, type ProtocolRequest, type ProtocolResponse } from '../kafka/kafkajs-internals.js'
import { offsetCommitRequest, type OffsetCommitArgs, type PartitionError } from '../kafka/offset-commit.js'
import { offsetFetchRequest, type OffsetFetchArgs, type OffsetFetchResult } from '../kafka/offset-fetch.js'
import { topicMetadataRequest } from '../kafka/topic-ids.js'
import type { ClassicTransport } from './classic-membership.js'
import type { MembershipTransport } from './membership.js'

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
    if (errors.length > 0) throw commitError(errors)
  }

  async fetchOffsets(args: OffsetFetchArgs): Promise<OffsetFetchResult> {
    return this.send(offsetFetchRequest(args))
  }

  resetCoordinator(): void {
    this.found = null
  }

  /** The coordinator broker, for the classic protocol's kafkajs-encoded calls. */
  async broker(): Promise<KafkajsBroker & KafkajsClassicGroupCalls> {
    this.found ??= await this.cluster.findGroupCoordinator({ groupId: this.groupId, coordinatorType: COORDINATOR_TYPES.GROUP })
    // kafkajs's broker has these (test/lib/kafka/kafkajs-internals.test.ts checks); squeeze's fakes need not.
    return this.found as KafkajsBroker & KafkajsClassicGroupCalls
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

function commitError(errors: readonly PartitionError[]): SqueezeError {
  const first = errors[0]
  const codes = [...new Set(errors.map((e) => e.errorCode))]
  // Coordinator moves and loads are worth another try; a stale or fenced epoch is not (the heartbeat fixes it).
  const retriable = codes.every((c) => c === 14 || c === 15 || c === 16)
  return new SqueezeError(ErrorCodes.GROUP, `offset commit refused for ${errors.length} partition(s), e.g. ${first?.topic}-${first?.partition}: ${codes.map(describeKafkaError).join('; ')}`, { retriable })
}
