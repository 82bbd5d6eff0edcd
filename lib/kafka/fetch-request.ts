import { groupByTopic, readTopicPartitions, writeTopicPartitions } from './group-by-topic.js'
import { Decoder, Encoder } from './kafkajs-internals.js'
import { ownRequest, type OwnRequest } from './own-request.js'

export interface FetchPartition {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly maxBytes: number
}

export interface AbortedTransaction {
  readonly producerId: bigint
  readonly firstOffset: number
}

/** One partition's answer: its record set left as raw bytes, for squeeze's own batch reader. */
export interface FetchedPartition {
  readonly topic: string
  readonly partition: number
  readonly errorCode: number
  readonly highWatermark: number
  readonly lastStableOffset: number
  readonly abortedTransactions: readonly AbortedTransaction[]
  readonly records: Buffer
}

export const ISOLATION = { READ_UNCOMMITTED: 0, READ_COMMITTED: 1 } as const

const FETCH_API_KEY = 1
// v4 is the oldest Fetch Kafka 4.x still serves (KIP-896) and carries the isolation level and the aborted
// transactions that read_committed needs; later versions add sessions and rack awareness squeeze does not use.
const FETCH_VERSION = 4

/**
 * A Fetch request whose response keeps each partition's record set as bytes. kafkajs's Fetch decodes every
 * record itself, which would hide the compressed size and the decompression cost squeeze is here to measure.
 */
export function fetchRequest(args: {
  maxWaitMs: number
  minBytes: number
  maxBytes: number
  isolationLevel: number
  partitions: readonly FetchPartition[]
}): OwnRequest<FetchedPartition[]> {
  const byTopic = groupByTopic(args.partitions)
  return ownRequest(
    { apiKey: FETCH_API_KEY, apiVersion: FETCH_VERSION, apiName: 'Fetch' },
    {
      encode: () => {
        const encoder = new Encoder()
        encoder
          .writeInt32(-1)
          .writeInt32(args.maxWaitMs)
          .writeInt32(args.minBytes)
          .writeInt32(args.maxBytes)
          .writeInt8(args.isolationLevel)
        return writeTopicPartitions(encoder, byTopic, (entry) =>
          encoder.writeInt32(entry.partition).writeInt64(String(entry.offset)).writeInt32(entry.maxBytes)
        )
      },
      decode: decodeFetchResponse
    }
  )
}

function decodeFetchResponse(raw: Buffer): FetchedPartition[] {
  const decoder = new Decoder(raw)
  decoder.readInt32() // throttle_time_ms
  return readTopicPartitions(decoder, (topic, partition): FetchedPartition => {
    const errorCode = decoder.readInt16()
    const highWatermark = Number(decoder.readInt64().toString())
    const lastStableOffset = Number(decoder.readInt64().toString())
    const abortedCount = decoder.readInt32()
    const abortedTransactions: AbortedTransaction[] = []
    for (let a = 0; a < abortedCount; a++) {
      abortedTransactions.push({
        producerId: BigInt(decoder.readInt64().toString()),
        firstOffset: Number(decoder.readInt64().toString())
      })
    }
    const size = decoder.readInt32()
    const start = decoder.offset
    const records = size <= 0 ? Buffer.alloc(0) : raw.subarray(start, start + size)
    decoder.offset = start + Math.max(size, 0)
    return { topic, partition, errorCode, highWatermark, lastStableOffset, abortedTransactions, records }
  })
}
