import { FlexibleWriter, flexibleRequest } from './flexible.js'
import type { ProtocolRequest, ProtocolResponse } from './kafkajs-internals.js'
import {
  decodeOffsetCommitResponse,
  writeOffsetTopics,
  type OffsetToCommit,
  type PartitionError
} from './offset-commit.js'

const TXN_OFFSET_COMMIT_API_KEY = 28
// v3 (KIP-447, Kafka 2.5+): the commit carries the consumer's group generation (member epoch) and member id, so
// the group coordinator refuses the offsets of a member that lost its partitions; kafkajs sends only v0.
const TXN_OFFSET_COMMIT_VERSION = 3

/** Who in the group the offsets come from (Java's ConsumerGroupMetadata); absent, the commit is not fenced. */
export interface GroupMemberIdentity {
  readonly memberId: string
  /** The member epoch (KIP-848 group) or generation id (classic group). */
  readonly generationId: number
  readonly groupInstanceId?: string | null
}

export interface TxnOffsetCommitArgs {
  readonly transactionalId: string
  readonly groupId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  /** Without a member: generation -1 and an empty member id, which the coordinator does not check (v0's behaviour). */
  readonly member?: GroupMemberIdentity
  readonly offsets: readonly OffsetToCommit[]
}

export function txnOffsetCommitBody(args: TxnOffsetCommitArgs): Buffer {
  const w = new FlexibleWriter()
  w.compactString(args.transactionalId).compactString(args.groupId).int64(args.producerId).int16(args.producerEpoch)
  w.int32(args.member?.generationId ?? -1)
    .compactString(args.member?.memberId ?? '')
    .compactString(args.member?.groupInstanceId ?? null)
  return writeOffsetTopics(w, args.offsets).tags().build()
}

/** The response has OffsetCommit's layout: per partition, its error code. */
export function txnOffsetCommitRequest(args: TxnOffsetCommitArgs): {
  request: ProtocolRequest
  response: ProtocolResponse<PartitionError[]>
} {
  return flexibleRequest(
    TXN_OFFSET_COMMIT_API_KEY,
    TXN_OFFSET_COMMIT_VERSION,
    'TxnOffsetCommit',
    txnOffsetCommitBody(args),
    decodeOffsetCommitResponse
  )
}
