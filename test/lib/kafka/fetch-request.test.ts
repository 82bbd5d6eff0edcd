import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fetchRequest, ISOLATION, type FetchPartition } from '../../../lib/kafka/fetch-request.js'
import { Encoder } from '../../../lib/kafka/kafkajs-internals.js'

/** Fetch v4's body written field by field with kafkajs's Encoder: the reference the shared topic/partition writer must match. */
function reference(partitions: FetchPartition[]): Buffer {
  const encoder = new Encoder() as unknown as {
    writeInt8(n: number): typeof encoder
    writeInt32(n: number): typeof encoder
    writeInt64(n: string): typeof encoder
    writeString(s: string): typeof encoder
    buffer: Buffer
  }
  encoder
    .writeInt32(-1)
    .writeInt32(500)
    .writeInt32(1)
    .writeInt32(50 * 1024 * 1024)
    .writeInt8(ISOLATION.READ_COMMITTED)
  const topics = [...new Set(partitions.map((p) => p.topic))]
  encoder.writeInt32(topics.length)
  for (const topic of topics) {
    const entries = partitions.filter((p) => p.topic === topic)
    encoder.writeString(topic).writeInt32(entries.length)
    for (const e of entries) encoder.writeInt32(e.partition).writeInt64(String(e.offset)).writeInt32(e.maxBytes)
  }
  return encoder.buffer
}

describe('fetch request', () => {
  it('encodes Fetch v4 byte for byte, topics grouped in first-seen order, offsets past 2^32, non-ASCII names', async () => {
    const partitions: FetchPartition[] = [
      { topic: 'logs', partition: 0, offset: 12_345_678_901, maxBytes: 256 * 1024 },
      { topic: 'métriques', partition: 3, offset: 0, maxBytes: 99 },
      { topic: 'logs', partition: 2, offset: 7, maxBytes: 5 }
    ]
    const { request } = fetchRequest({
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 50 * 1024 * 1024,
      isolationLevel: ISOLATION.READ_COMMITTED,
      partitions
    })
    assert.deepEqual(
      [request.apiKey, request.apiVersion, request.apiName, request.expectResponse()],
      [1, 4, 'Fetch', true]
    )
    const encoded = await request.encode()
    assert.ok('buffer' in encoded)
    assert.deepEqual(encoded.buffer, reference(partitions))
  })
})
