import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Encoder } from '../../../lib/kafka/kafkajs-internals.js'
import { produceRequest, RequestBufferPool, type PartitionBatch } from '../../../lib/kafka/produce-request.js'

/** The body as kafkajs's own Encoder lays it out: the reference the one-buffer writer must match byte for byte. */
function viaKafkajsEncoder(
  transactionalId: string | null,
  acks: number,
  timeoutMs: number,
  batches: PartitionBatch[]
): Buffer {
  const encoder = new Encoder() as unknown as {
    writeString(s: string | null): typeof encoder
    writeInt16(n: number): typeof encoder
    writeInt32(n: number): typeof encoder
    writeBuffer(b: Buffer): typeof encoder
    buffer: Buffer
  }
  encoder.writeString(transactionalId).writeInt16(acks).writeInt32(timeoutMs)
  const topics = [...new Set(batches.map((b) => b.topic))]
  encoder.writeInt32(topics.length)
  for (const topic of topics) {
    const entries = batches.filter((b) => b.topic === topic)
    encoder.writeString(topic).writeInt32(entries.length)
    for (const e of entries) encoder.writeInt32(e.partition).writeInt32(e.batch.length).writeBuffer(e.batch)
  }
  return encoder.buffer
}

describe('produce request body', () => {
  it("matches kafkajs's encoder byte for byte, with and without a transactional id and non-ASCII topic names", async () => {
    const batches: PartitionBatch[] = [
      { topic: 'logs', partition: 0, batch: Buffer.from('first batch') },
      { topic: 'métriques', partition: 2, batch: Buffer.alloc(3000, 7) },
      { topic: 'logs', partition: 1, batch: Buffer.from([1, 2, 3]) }
    ]
    for (const txn of [null, 'copier-tx-ü']) {
      const { request } = produceRequest({ acks: -1, timeoutMs: 30_000, transactionalId: txn, batches })
      const encoded = await request.encode()
      assert.ok('buf' in encoded)
      assert.deepEqual(encoded.buffer, viaKafkajsEncoder(txn, -1, 30_000, batches))
    }
  })

  it("written into a reused buffer still holding an earlier request, matches kafkajs's encoder, and reuses its memory", async () => {
    const pool = new RequestBufferPool(2)
    const large: PartitionBatch[] = [
      { topic: 'logs', partition: 0, batch: Buffer.alloc(9000, 0xab) },
      { topic: 'other', partition: 1, batch: Buffer.alloc(500, 0xcd) }
    ]
    const small: PartitionBatch[] = [{ topic: 'logs', partition: 2, batch: Buffer.from('a smaller batch') }]
    let taken: Buffer[] = []
    const allocate = (size: number): Buffer => {
      const b = pool.take(size)
      taken.push(b)
      return b
    }
    for (const batches of [large, small, large]) {
      taken = []
      const { request } = produceRequest({ acks: -1, timeoutMs: 30_000, transactionalId: null, batches, allocate })
      const encoded = await request.encode()
      assert.ok('buf' in encoded)
      assert.deepEqual(encoded.buffer, viaKafkajsEncoder(null, -1, 30_000, batches))
      for (const b of taken) pool.give(b)
    }
    const reused = pool.take(100)
    assert.equal(pool.take(100).buffer === reused.buffer, false)
    assert.ok(reused.buffer.byteLength >= 9000, "the large request's buffer is taken again")
  })
})
