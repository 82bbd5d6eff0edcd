import { FlexibleWriter, flexibleRequest, type FlexibleReader } from './flexible.js'
import type { ProtocolRequest, ProtocolResponse } from './kafkajs-internals.js'

/** ConsumerGroupDescribe (KIP-848): describes a group of the new consumer protocol, which DescribeGroups does not. */
export const CONSUMER_GROUP_DESCRIBE_API_KEY = 69
// v0: v1 adds only the members' type (KIP-1099), which squeeze does not read.
const CONSUMER_GROUP_DESCRIBE_VERSION = 0

export interface ConsumerGroupMember {
  readonly memberId: string
  readonly clientId: string
  readonly clientHost: string
}

export interface DescribedConsumerGroup {
  readonly groupId: string
  /** GROUP_ID_NOT_FOUND for a group that does not exist or is not a consumer-protocol group. */
  readonly errorCode: number
  readonly errorMessage: string | null
  readonly state: string
  readonly members: readonly ConsumerGroupMember[]
}

export function consumerGroupDescribeBody(groupIds: readonly string[]): Buffer {
  const w = new FlexibleWriter()
  w.compactArray(groupIds, (id) => w.compactString(id))
  w.bool(false) // include_authorized_operations
  return w.tags().build()
}

function skipAssignment(r: FlexibleReader): void {
  r.compactArray(() => {
    r.uuid() // topic id
    r.compactString() // topic name
    r.int32Array() // partitions
    r.tags()
  })
  r.tags()
}

export function decodeConsumerGroupDescribe(r: FlexibleReader): DescribedConsumerGroup[] {
  r.int32() // throttle_time_ms
  const groups =
    r.compactArray(() => {
      const errorCode = r.int16()
      const errorMessage = r.compactString()
      const groupId = r.compactString() ?? ''
      const state = r.compactString() ?? ''
      r.int32() // group epoch
      r.int32() // assignment epoch
      r.compactString() // assignor name
      const members =
        r.compactArray(() => {
          const memberId = r.compactString() ?? ''
          r.compactString() // instance id
          r.compactString() // rack id
          r.int32() // member epoch
          const clientId = r.compactString() ?? ''
          const clientHost = r.compactString() ?? ''
          r.compactArray(() => r.compactString()) // subscribed topic names
          r.compactString() // subscribed topic regex
          skipAssignment(r) // assignment
          skipAssignment(r) // target assignment
          r.tags()
          return { memberId, clientId, clientHost }
        }) ?? []
      r.int32() // authorized operations
      r.tags()
      return { groupId, errorCode, errorMessage, state, members }
    }) ?? []
  r.tags()
  return groups
}

export function consumerGroupDescribeRequest(groupIds: readonly string[]): {
  request: ProtocolRequest
  response: ProtocolResponse<DescribedConsumerGroup[]>
} {
  return flexibleRequest(
    CONSUMER_GROUP_DESCRIBE_API_KEY,
    CONSUMER_GROUP_DESCRIBE_VERSION,
    'ConsumerGroupDescribe',
    consumerGroupDescribeBody(groupIds),
    decodeConsumerGroupDescribe
  )
}
