import { ErrorCodes, SqueezeError } from '../errors.js'
import { describeKafkaError, KafkaErrorCode } from './error-codes.js'
import { FlexibleWriter, flexibleRequest, type FlexibleReader } from './flexible.js'
import { groupByTopic } from './group-by-topic.js'
import type { ProtocolRequest, ProtocolResponse } from './kafkajs-internals.js'

const OFFSET_COMMIT_API_KEY = 8
// v9: the first version a member of a KIP-848 group may commit with (its member epoch as the generation).
const OFFSET_COMMIT_VERSION = 9

export interface OffsetToCommit {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

export interface PartitionError {
  readonly topic: string
  readonly partition: number
  readonly errorCode: number
}

export interface OffsetCommitArgs {
  readonly groupId: string
  /** The member epoch (new protocol) or generation id (classic); -1 with an empty member id for a standalone commit. */
  readonly generationIdOrMemberEpoch: number
  readonly memberId: string
  readonly offsets: readonly OffsetToCommit[]
}

export function offsetCommitBody(args: OffsetCommitArgs): Buffer {
  const w = new FlexibleWriter()
  w.compactString(args.groupId).int32(args.generationIdOrMemberEpoch).compactString(args.memberId)
  w.compactString(null) // group instance id
  return writeOffsetTopics(w, args.offsets).tags().build()
}

/** The topics array OffsetCommit v8+ and TxnOffsetCommit v3+ share: no leader epoch, no metadata. */
export function writeOffsetTopics(w: FlexibleWriter, offsets: readonly OffsetToCommit[]): FlexibleWriter {
  return w.compactArray([...groupByTopic(offsets)], ([topic, entries]) => {
    w.compactString(topic)
    w.compactArray(entries, (e) => w.int32(e.partition).int64(e.offset).int32(-1).compactString(null).tags())
    w.tags()
  })
}

export function decodeOffsetCommitResponse(r: FlexibleReader): PartitionError[] {
  r.int32() // throttle_time_ms
  const errors =
    r.compactArray(() => {
      const topic = r.compactString() ?? ''
      const partitions =
        r.compactArray(() => {
          const partition = r.int32()
          const errorCode = r.int16()
          r.tags()
          return { topic, partition, errorCode }
        }) ?? []
      r.tags()
      return partitions
    }) ?? []
  r.tags()
  return errors.flat()
}

export function offsetCommitRequest(args: OffsetCommitArgs): {
  request: ProtocolRequest
  response: ProtocolResponse<PartitionError[]>
} {
  return flexibleRequest(
    OFFSET_COMMIT_API_KEY,
    OFFSET_COMMIT_VERSION,
    'OffsetCommit',
    offsetCommitBody(args),
    decodeOffsetCommitResponse
  )
}

/** The coordinator moved, is loading, or (transactional) still ends the previous transaction: worth another try. */
const RETRY_COMMIT = new Set<number>([
  KafkaErrorCode.GROUP_LOAD_IN_PROGRESS,
  KafkaErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE,
  KafkaErrorCode.NOT_COORDINATOR_FOR_GROUP,
  KafkaErrorCode.CONCURRENT_TRANSACTIONS,
  KafkaErrorCode.REQUEST_TIMED_OUT
])

/**
 * The committer is no longer the member that owns these partitions (KIP-447's fencing): its generation or member
 * epoch is past, the coordinator no longer knows its member id, or a rebalance is taking its partitions.
 */
const FENCED = new Set<number>([
  KafkaErrorCode.ILLEGAL_GENERATION,
  KafkaErrorCode.UNKNOWN_MEMBER_ID,
  KafkaErrorCode.REBALANCE_IN_PROGRESS,
  KafkaErrorCode.FENCED_INSTANCE_ID,
  KafkaErrorCode.FENCED_MEMBER_EPOCH,
  KafkaErrorCode.STALE_MEMBER_EPOCH
])

/** A commit the coordinator refused for some partitions: retriable, fenced (GROUP_FENCED), or other. */
export class CommitRefusedError extends SqueezeError {
  constructor(
    errors: readonly PartitionError[],
    what: string,
    readonly kafkaCodes: readonly number[] = [...new Set(errors.map((e) => e.errorCode))]
  ) {
    const first = errors[0]
    super(
      kafkaCodes.every((c) => FENCED.has(c)) ? ErrorCodes.GROUP_FENCED : ErrorCodes.GROUP,
      `${what} refused for ${errors.length} partition(s), e.g. ${first?.topic}-${first?.partition}: ${kafkaCodes.map(describeKafkaError).join('; ')}`,
      { retriable: kafkaCodes.every((c) => RETRY_COMMIT.has(c)) }
    )
  }

  /** Refused for an epoch or generation the member has just left behind: a member still in the group. */
  get staleEpoch(): boolean {
    return this.kafkaCodes.every(
      (c) => c === KafkaErrorCode.ILLEGAL_GENERATION || c === KafkaErrorCode.STALE_MEMBER_EPOCH
    )
  }
}

export function commitRefused(errors: readonly PartitionError[], what = 'offset commit'): CommitRefusedError {
  return new CommitRefusedError(errors, what)
}
