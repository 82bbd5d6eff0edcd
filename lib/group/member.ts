import { ErrorCodes, SqueezeError } from '../errors.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { CommitRefusedError } from '../kafka/offset-commit.js'
import type { GroupMemberIdentity } from '../kafka/txn-offset-commit.js'
import type { Logger } from '../log/logger.js'
import { COORDINATOR_RETRY, retry, sleep } from '../retry.js'
import { ClassicMembership } from './classic-membership.js'
import type { GroupCoordinator } from './coordinator.js'
import { GroupMembership, type MembershipListener, type TopicPartition } from './membership.js'

export type GroupProtocol = 'consumer' | 'classic'

/** How long a commit refused for a stale epoch waits for the heartbeat that brings the new one (Kafka's interval is 5 s). */
const EPOCH_WAIT_MS = 6000

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
  deps: {
    coordinator: GroupCoordinator
    cluster: KafkajsCluster
    listener: MembershipListener
    log: Logger
    onRebalance?: () => void
  }
): Member {
  const { groupId, topics, rebalanceTimeoutMs } = config
  const common = {
    listener: deps.listener,
    log: deps.log,
    transport: deps.coordinator,
    ...(deps.onRebalance === undefined ? {} : { onRebalance: deps.onRebalance })
  }
  return config.protocol === 'consumer'
    ? new GroupMembership({ groupId, topics, rebalanceTimeoutMs }, common)
    : new ClassicMembership(
        {
          groupId,
          topics,
          rebalanceTimeoutMs,
          sessionTimeoutMs: config.sessionTimeoutMs,
          heartbeatIntervalMs: config.heartbeatIntervalMs
        },
        { ...common, cluster: deps.cluster }
      )
}

/**
 * The protocol -X group.protocol asks for, else the new one (KIP-848) where the coordinator serves it, as the
 * Java client does; asking for the new one where it is missing is a start-up error.
 */
export async function chooseProtocol(
  coordinator: GroupCoordinator,
  requested: GroupProtocol | undefined
): Promise<GroupProtocol> {
  const newProtocol = await retry(() => coordinator.supportsConsumerProtocol(), COORDINATOR_RETRY)
  const protocol = requested ?? (newProtocol ? 'consumer' : 'classic')
  if (protocol === 'consumer' && !newProtocol) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `group.protocol=consumer: the group coordinator does not serve ConsumerGroupHeartbeat (Kafka 4.0+ has it); use -X group.protocol=classic`
    )
  }
  return protocol
}

/**
 * Refuses a group whose active members are other clients (a client id that is not `clientId`): joining would take
 * partitions from them and commit offsets for them, which they then start from. Members of both protocols count.
 */
export async function refuseForeignGroup(
  coordinator: GroupCoordinator,
  groupId: string,
  clientId: string
): Promise<void> {
  const members = await retry(() => coordinator.activeMembers(), COORDINATOR_RETRY)
  const foreign = [
    ...new Set(members.filter((m) => m.clientId !== clientId).map((m) => `${m.clientId} at ${m.clientHost}`))
  ]
  if (foreign.length === 0) return
  throw new SqueezeError(
    ErrorCodes.GROUP,
    `group ${groupId} has ${members.length} active member(s) of other clients (${foreign.slice(0, 3).join(', ')}` +
      `${foreign.length > 3 ? ', ...' : ''}): joining would take partitions from them and commit offsets they then ` +
      "start from; give a group of squeeze's own, or --join-foreign-group to join it anyway"
  )
}

/** A KIP-848 member's offset fetch is checked against its epoch; a classic group's is an unchecked one. */
export function fetchIdentity(
  protocol: GroupProtocol,
  member: Member
): { memberId: string; memberEpoch: number } | null {
  return protocol === 'consumer' ? { memberId: member.memberId, memberEpoch: member.memberEpoch } : null
}

/**
 * Commits as the member, with its current epoch. The coordinator bumps a member's epoch once a rebalance settles,
 * which can happen while a commit is on the wire: a commit refused then (STALE_MEMBER_EPOCH, ILLEGAL_GENERATION)
 * goes once more with the epoch the next heartbeat brings. The offsets are still the member's at that epoch as long
 * as its partitions leave only through onRevoked, which waits for this commit; a member fenced meanwhile has epoch
 * 0 or less. Refused again, with no new epoch, or for another reason, the error is thrown: a CommitRefusedError
 * coded GROUP_FENCED means the partitions may be another member's already (drop them and rejoin).
 */
export async function commitAsMember(
  member: Member,
  commit: (identity: GroupMemberIdentity) => Promise<void>,
  stopping: () => boolean
): Promise<void> {
  const epoch = member.memberEpoch
  try {
    await commit({ memberId: member.memberId, generationId: epoch })
  } catch (err) {
    if (!(err instanceof CommitRefusedError && err.staleEpoch)) throw err
    const deadline = Date.now() + EPOCH_WAIT_MS
    while (member.memberEpoch === epoch && Date.now() < deadline && !stopping()) await sleep(50)
    if (member.memberEpoch === epoch || member.memberEpoch <= 0) throw err
    await commit({ memberId: member.memberId, generationId: member.memberEpoch })
  }
}
