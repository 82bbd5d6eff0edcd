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
  w.compactArray([...groupByTopic(args.offsets)], ([topic, entries]) => {
    w.compactString(topic)
    w.compactArray(entries, (e) => w.int32(e.partition).int64(e.offset).int32(-1).compactString(null).tags())
    w.tags()
  })
  return w.tags().build()
}

export function decodeOffsetCommitResponse(r: FlexibleReader): PartitionError[] {
  r.int32() // throttle_time_ms
  const errors = r.compactArray(() => {
    const topic = r.compactString() ?? ''
    const partitions = r.compactArray(() => {
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

export function offsetCommitRequest(args: OffsetCommitArgs): { request: ProtocolRequest; response: ProtocolResponse<PartitionError[]> } {
  return flexibleRequest(OFFSET_COMMIT_API_KEY, OFFSET_COMMIT_VERSION, 'OffsetCommit', offsetCommitBody(args), decodeOffsetCommitResponse)
}
