import { FlexibleWriter, flexibleRequest, type FlexibleReader } from './flexible.js'
import type { ProtocolRequest, ProtocolResponse } from './kafkajs-internals.js'

const METADATA_API_KEY = 3
// v12: topic ids (v10+) in a flexible version; kafkajs's own Metadata predates topic ids.
const METADATA_VERSION = 12

export interface TopicIdentity {
  readonly name: string
  readonly topicId: string
  readonly errorCode: number
  readonly partitions: number
}

export function topicMetadataBody(topics: readonly string[]): Buffer {
  const w = new FlexibleWriter()
  w.compactArray(topics, (name) => w.uuid('AAAAAAAAAAAAAAAAAAAAAA').compactString(name).tags())
  w.bool(false) // allow_auto_topic_creation
  w.bool(false) // include_topic_authorized_operations
  return w.tags().build()
}

export function decodeTopicMetadata(r: FlexibleReader): TopicIdentity[] {
  r.int32() // throttle_time_ms
  r.compactArray(() => {
    r.int32() // node id
    r.compactString() // host
    r.int32() // port
    r.compactString() // rack
    r.tags()
  })
  r.compactString() // cluster id
  r.int32() // controller id
  const topics =
    r.compactArray(() => {
      const errorCode = r.int16()
      const name = r.compactString() ?? ''
      const topicId = r.uuid()
      r.bool() // is_internal
      const partitions =
        r.compactArray(() => {
          r.int16() // error code
          r.int32() // partition index
          r.int32() // leader
          r.int32() // leader epoch
          r.int32Array() // replicas
          r.int32Array() // isr
          r.int32Array() // offline replicas
          r.tags()
        }) ?? []
      r.int32() // topic_authorized_operations
      r.tags()
      return { name, topicId, errorCode, partitions: partitions.length }
    }) ?? []
  r.tags()
  return topics
}

/** A Metadata request for the topics' ids: the new consumer protocol names partitions by topic id. */
export function topicMetadataRequest(topics: readonly string[]): {
  request: ProtocolRequest
  response: ProtocolResponse<TopicIdentity[]>
} {
  return flexibleRequest(METADATA_API_KEY, METADATA_VERSION, 'Metadata', topicMetadataBody(topics), decodeTopicMetadata)
}
