import { FlexibleWriter, flexibleRequest, type FlexibleReader } from './flexible.js'
import { groupByTopic } from './group-by-topic.js'
import type { ProtocolRequest, ProtocolResponse } from './kafkajs-internals.js'

const OFFSET_FETCH_API_KEY = 9
// v9: carries the member id and epoch, so a KIP-848 member's fetch is checked against its membership.
const OFFSET_FETCH_VERSION = 9

export interface OffsetFetchArgs {
  readonly groupId: string
  /** null with epoch -1: an admin's fetch, not checked against any membership. */
  readonly memberId: string | null
  readonly memberEpoch: number
  readonly partitions: ReadonlyArray<{ readonly topic: string; readonly partition: number }>
}

export interface CommittedOffset {
  readonly topic: string
  readonly partition: number
  /** -1 when the group has no offset for the partition. */
  readonly offset: number
  readonly errorCode: number
}

export interface OffsetFetchResult {
  readonly errorCode: number
  readonly offsets: readonly CommittedOffset[]
}

export function offsetFetchBody(args: OffsetFetchArgs): Buffer {
  const w = new FlexibleWriter()
  w.compactArray([args], (group) => {
    w.compactString(group.groupId).compactString(group.memberId).int32(group.memberEpoch)
    w.compactArray([...groupByTopic(group.partitions)], ([topic, entries]) =>
      w
        .compactString(topic)
        .int32Array(entries.map((e) => e.partition))
        .tags()
    )
    w.tags()
  })
  // require_stable: wait out offsets still pending in open transactions (an exactly-once copier's commits).
  w.bool(true)
  return w.tags().build()
}

export function decodeOffsetFetchResponse(r: FlexibleReader): OffsetFetchResult {
  r.int32() // throttle_time_ms
  const groups =
    r.compactArray(() => {
      r.compactString() // group id
      const offsets = (
        r.compactArray(() => {
          const topic = r.compactString() ?? ''
          const partitions =
            r.compactArray(() => {
              const partition = r.int32()
              const offset = r.int64()
              r.int32() // committed_leader_epoch
              r.compactString() // metadata
              const errorCode = r.int16()
              r.tags()
              return { topic, partition, offset, errorCode }
            }) ?? []
          r.tags()
          return partitions
        }) ?? []
      ).flat()
      const errorCode = r.int16()
      r.tags()
      return { errorCode, offsets }
    }) ?? []
  r.tags()
  return groups[0] ?? { errorCode: 0, offsets: [] }
}

export function offsetFetchRequest(args: OffsetFetchArgs): {
  request: ProtocolRequest
  response: ProtocolResponse<OffsetFetchResult>
} {
  return flexibleRequest(
    OFFSET_FETCH_API_KEY,
    OFFSET_FETCH_VERSION,
    'OffsetFetch',
    offsetFetchBody(args),
    decodeOffsetFetchResponse
  )
}
