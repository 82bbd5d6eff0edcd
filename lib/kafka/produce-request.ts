import { groupByTopic } from './group-by-topic.js'
import { Encoder, protocolError, type ProtocolRequest, type ProtocolResponse } from './kafkajs-internals.js'
import { Decoder } from './kafkajs-internals.js'

/** One partition's batch in a produce request. */
export interface PartitionBatch {
  readonly topic: string
  readonly partition: number
  readonly batch: Buffer
}

export interface PartitionProduceResult {
  readonly topic: string
  readonly partition: number
  readonly errorCode: number
  readonly baseOffset: number
}

const PRODUCE_API_KEY = 0
// v7 (KIP-110 zstd support) is the newest version whose response layout kafkajs already knows; Kafka 4.x
// still serves v3..v12, and nothing later changes what a producer of magic-2 batches sends.
const PRODUCE_VERSION = 7

/**
 * A Produce request carrying batches squeeze already encoded and compressed. kafkajs's own Produce request
 * would re-encode every record through its slower encoder; this one writes the bytes as they are.
 */
export function produceRequest(args: {
  acks: number
  timeoutMs: number
  transactionalId: string | null
  batches: readonly PartitionBatch[]
}): { request: ProtocolRequest; response: ProtocolResponse<PartitionProduceResult[]> } {
  const byTopic = groupByTopic(args.batches)
  const payloadBytes = args.batches.reduce((sum, entry) => sum + entry.batch.length + 8, 64)
  const request: ProtocolRequest = {
    apiKey: PRODUCE_API_KEY,
    apiVersion: PRODUCE_VERSION,
    apiName: 'Produce',
    expectResponse: () => args.acks !== 0,
    encode: async () => {
      const encoder = new Encoder(payloadBytes)
      encoder.writeString(args.transactionalId).writeInt16(args.acks).writeInt32(args.timeoutMs)
      encoder.writeInt32(byTopic.size)
      for (const [topic, entries] of byTopic) {
        encoder.writeString(topic).writeInt32(entries.length)
        for (const entry of entries) {
          encoder.writeInt32(entry.partition).writeInt32(entry.batch.length).writeBuffer(entry.batch)
        }
      }
      return encoder
    }
  }
  return { request, response: { decode: decodeProduceResponse, parse: async (decoded) => decoded } }
}

async function decodeProduceResponse(raw: Buffer): Promise<PartitionProduceResult[]> {
  const decoder = new Decoder(raw)
  const results: PartitionProduceResult[] = []
  const topics = decoder.readInt32()
  for (let t = 0; t < topics; t++) {
    const topic = decoder.readString()
    const partitions = decoder.readInt32()
    for (let p = 0; p < partitions; p++) {
      const partition = decoder.readInt32()
      const errorCode = decoder.readInt16()
      const baseOffset = Number(decoder.readInt64().toString())
      decoder.readInt64() // log_append_time
      decoder.readInt64() // log_start_offset
      results.push({ topic, partition, errorCode, baseOffset })
    }
  }
  return results
}


/** Whether a produce error code is worth retrying the same batch for (Kafka's own classification). */
export function isRetriableProduceError(code: number): boolean {
  return protocolError(code).retriable
}

export function describeProduceError(code: number): string {
  const definition = protocolError(code)
  return `${definition.type}: ${definition.message}`
}
