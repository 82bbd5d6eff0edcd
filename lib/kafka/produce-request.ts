import { groupByTopic, readTopicPartitions } from './group-by-topic.js'
import { Decoder, encodedPayloadWithRoom, FRAMING_ROOM_BYTES } from './kafkajs-internals.js'
import { ownRequest, type OwnRequest } from './own-request.js'

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
  /** The request's buffer, of exactly `size` bytes; a fresh one by default (see RequestBufferPool). */
  allocate?: (size: number) => Buffer
}): OwnRequest<PartitionProduceResult[]> {
  const byTopic = groupByTopic(args.batches)
  return ownRequest(
    { apiKey: PRODUCE_API_KEY, apiVersion: PRODUCE_VERSION, apiName: 'Produce' },
    {
      expectResponse: () => args.acks !== 0,
      encode: () =>
        encodedPayloadWithRoom(
          produceBody(args.transactionalId, args.acks, args.timeoutMs, byTopic, args.allocate ?? Buffer.allocUnsafe)
        ),
      decode: decodeProduceResponse
    }
  )
}

/**
 * Buffers for produce requests, taken back once a request's response arrived (the socket has written it by
 * then). A fresh buffer of a few hundred KiB costs more in page faults on first write than copying the batches
 * into it; the producer sends one per round and leader.
 */
export class RequestBufferPool {
  private readonly free: Buffer[] = []

  constructor(private readonly keep: number) {}

  /** `size` bytes from a free buffer at least that large, else a new one (with room to grow, for the next request). */
  take(size: number): Buffer {
    const at = this.free.findIndex((b) => b.length >= size)
    const whole = at === -1 ? Buffer.allocUnsafeSlow(size + (size >>> 3)) : (this.free.splice(at, 1)[0] as Buffer)
    return whole.subarray(0, size)
  }

  /** Gives back what take() returned, once nothing reads it any more. */
  give(buffer: Buffer): void {
    if (this.free.length < this.keep)
      this.free.push(Buffer.from(buffer.buffer, buffer.byteOffset, buffer.buffer.byteLength - buffer.byteOffset))
  }
}

/**
 * Produce v7's body in one buffer, after room for kafkajs's framing (see encodedPayloadWithRoom); batches go in
 * with TypedArray.set, the fastest copy there is. A buffer per request: the framing writes into it.
 */
function produceBody(
  transactionalId: string | null,
  acks: number,
  timeoutMs: number,
  byTopic: ReadonlyMap<string, readonly PartitionBatch[]>,
  allocate: (size: number) => Buffer
): Buffer {
  const txn = transactionalId === null ? null : Buffer.from(transactionalId, 'utf8')
  let size = 2 + (txn?.length ?? 0) + 2 + 4 + 4
  for (const [topic, entries] of byTopic) {
    size += 2 + Buffer.byteLength(topic, 'utf8') + 4
    for (const entry of entries) size += 4 + 4 + entry.batch.length
  }
  const body = allocate(FRAMING_ROOM_BYTES + size)
  let at = body.writeInt16BE(txn === null ? -1 : txn.length, FRAMING_ROOM_BYTES)
  if (txn !== null) {
    body.set(txn, at)
    at += txn.length
  }
  at = body.writeInt16BE(acks, at)
  at = body.writeInt32BE(timeoutMs, at)
  at = body.writeInt32BE(byTopic.size, at)
  for (const [topic, entries] of byTopic) {
    const name = Buffer.from(topic, 'utf8')
    at = body.writeInt16BE(name.length, at)
    body.set(name, at)
    at += name.length
    at = body.writeInt32BE(entries.length, at)
    for (const entry of entries) {
      at = body.writeInt32BE(entry.partition, at)
      at = body.writeInt32BE(entry.batch.length, at)
      body.set(entry.batch, at)
      at += entry.batch.length
    }
  }
  return body
}

function decodeProduceResponse(raw: Buffer): PartitionProduceResult[] {
  const decoder = new Decoder(raw)
  return readTopicPartitions(decoder, (topic, partition): PartitionProduceResult => {
    const errorCode = decoder.readInt16()
    const baseOffset = Number(decoder.readInt64().toString())
    decoder.readInt64() // log_append_time
    decoder.readInt64() // log_start_offset
    return { topic, partition, errorCode, baseOffset }
  })
}
