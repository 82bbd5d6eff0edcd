import { ErrorCodes, SqueezeError } from '../errors.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import { COORDINATOR_RETRY, retry } from '../retry.js'
import { ClassicMembership } from './classic-membership.js'
import type { GroupCoordinator } from './coordinator.js'
import { GroupMembership, type MembershipListener, type TopicPartition } from './membership.js'

export type GroupProtocol = 'consumer' | 'classic'

/** What a group's user needs of a membership, whichever protocol: KIP-848's or the classic one. */
export interface Member {
  readonly memberId: string
  /** The member epoch (KIP-848) or generation id (classic) that commits carry. */
  readonly memberEpoch: number
  readonly assignment: readonly TopicPartition[]
  run(signal: AbortSignal): Promise<void>
  /** The coordinator refused a commit as fenced: give every partition up uncommitted (onLost) and join again. */
  rejoin(): void
}

export interface MemberConfig {
  readonly groupId: string
  readonly topics: readonly string[]
  readonly protocol: GroupProtocol
  readonly rebalanceTimeoutMs: number
  /** Classic protocol only: the new protocol's session and heartbeat are the broker's (group.consumer.*). */
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
}

export function createMember(
  config: MemberConfig,
  deps: { coordinator: GroupCoordinator; cluster: KafkajsCluster; listener: MembershipListener; log: Logger; onRebalance?: () => void }
): Member {
  const { groupId, topics, rebalanceTimeoutMs } = config
  const common = { listener: deps.listener, log: deps.log, transport: deps.coordinator, ...(deps.onRebalance === undefined ? {} : { onRebalance: deps.onRebalance }) }
  return config.protocol === 'consumer'
    ? new GroupMembership({ groupId, topics, rebalanceTimeoutMs }, common)
    : new ClassicMembership({ groupId, topics, rebalanceTimeoutMs, sessionTimeoutMs: config.sessionTimeoutMs, heartbeatIntervalMs: config.heartbeatIntervalMs }, { ...common, cluster: deps.cluster })
}

/**
 * The protocol -X group.protocol asks for, else the new one (KIP-848) where the coordinator serves it, as the
 * Java client does; asking for the new one where it is missing is a start-up error.
 */
export async function chooseProtocol(coordinator: GroupCoordinator, requested: GroupProtocol | undefined): Promise<GroupProtocol> {
  const newProtocol = await retry(() => coordinator.supportsConsumerProtocol(), COORDINATOR_RETRY)
  const protocol = requested ?? (newProtocol ? 'consumer' : 'classic')
  if (protocol === 'consumer' && !newProtocol) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `group.protocol=consumer: the group coordinator does not serve ConsumerGroupHeartbeat (Kafka 4.0+ has it); use -X group.protocol=classic`)
  }
  return protocol
}

/** A KIP-848 member's offset fetch is checked against its epoch; a classic group's is an unchecked one. */
export function fetchIdentity(protocol: GroupProtocol, member: Member): { memberId: string; memberEpoch: number } | null {
  return protocol === 'consumer' ? { memberId: member.memberId, memberEpoch: member.memberEpoch } : null
}
