import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OutgoingRecord } from '../../lib/protocol/record.js'
import { innerOffsetsAreSequential } from '../../lib/protocol/record-batch-reader.js'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { partitionForKey } from '../../lib/producer/partitioner.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../lib/consumer/partition-reader.js'
import { createCluster } from '../../lib/kafka/connection.js'

const kafka = useTestKafka()

function makeRecords(count: number): OutgoingRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    key: i % 4 === 0 ? null : Buffer.from(`host-${i % 23}.example.com`),
    value: Buffer.from(`${i} GET /static/${i % 97}.css 200 ${(i * 7919) % 50000} "Mozilla/5.0"`),
    headers:
      i % 5 === 0
        ? [
            { key: 'trace-id', value: Buffer.from(`t-${i}`) },
            { key: 'nullable', value: null }
          ]
        : [],
    timestamp: RECENT_MS + i * 13
  }))
}

describe('producer -> broker -> reader round trip', () => {
  for (const spec of ['none', 'gzip:1', 'gzip:9', 'snappy', 'lz4:1', 'lz4:9', 'zstd:-3', 'zstd:3', 'zstd:19']) {
    it(`${spec}: keys, values, headers, timestamps and per-partition order survive byte for byte`, async (t) => {
      const topic = await kafka.createTopic(t, { partitions: 3 })
      const producer = await kafka.startProducer({
        codec: parseCodecSpec(spec),
        lingerMs: 20,
        batchSizeBytes: 64 * 1024
      })
      const records = makeRecords(3000)
      for (const record of records) await producer.send({ topic, ...record })
      await producer.flush()
      const stats = producer.snapshot()
      assert.equal(stats.recordsAcked, records.length)
      assert.equal(stats.recordsFailed, 0)

      const batches = await kafka.readAll([topic])
      const codecId = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 }[parseCodecSpec(spec).codec]
      const byPartition = new Map<
        number,
        Array<{ key: string | null; value: string; headers: string; timestamp: number }>
      >()
      for (const { partition, batch } of batches) {
        assert.equal(batch.codecId, codecId, 'the broker stored the producer codec')
        assert.ok(innerOffsetsAreSequential(batch))
        const list = byPartition.get(partition) ?? []
        for (const r of batch.records) {
          list.push({
            key: r.key?.toString() ?? null,
            value: r.value?.toString() ?? '',
            headers: JSON.stringify(r.headers.map((h) => [h.key, h.value?.toString() ?? null])),
            timestamp: r.timestamp
          })
        }
        byPartition.set(partition, list)
      }
      const received = [...byPartition.values()].reduce((n, l) => n + l.length, 0)
      assert.equal(received, records.length)
      // Keyed records sit on murmur2(key)'s partition, in send order; keyless ones keep send order per partition.
      const expected = new Map<number, string[]>()
      for (const r of records) {
        if (r.key === null) continue
        const p = partitionForKey(r.key, 3)
        const list = expected.get(p) ?? []
        list.push(r.value?.toString() ?? '')
        expected.set(p, list)
      }
      for (const [p, values] of expected) {
        const keyed = (byPartition.get(p) ?? []).filter((r) => r.key !== null).map((r) => r.value)
        assert.deepEqual(keyed, values, `partition ${p} order`)
      }
      const all = [...byPartition.values()].flat()
      const index = new Map(all.map((r) => [r.value, r]))
      for (const r of records) {
        const got = index.get(r.value?.toString() ?? '')
        assert.ok(got, 'record present')
        assert.equal(got.key, r.key?.toString() ?? null)
        assert.equal(got.timestamp, r.timestamp)
        assert.equal(got.headers, JSON.stringify((r.headers ?? []).map((h) => [h.key, h.value?.toString() ?? null])))
      }
    })
  }
})

describe('reader positions', () => {
  it('reads a topic whose start retention moved past 0, and a small partitionMaxBytes, batch by batch in order', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    const producer = await kafka.startProducer({ codec: parseCodecSpec('zstd:1'), lingerMs: 5, batchSizeBytes: 4096 })
    const records = makeRecords(2000)
    for (const record of records) await producer.send({ topic, partition: 0, ...record })
    await producer.flush()
    // Kafka trims the log start to offset 700: reading from earliest gets OFFSET_OUT_OF_RANGE at 0 and moves on.
    await kafka.admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '700' }] })
    // 8 KiB per partition per fetch: many rounds, each fetched while the previous one is decoded.
    const batches = await kafka.readAll([topic], { partitionMaxBytes: 8 * 1024 })
    assert.ok(batches.length > 20, `read in many fetch rounds (${batches.length} batches)`)
    const offsets = batches.flatMap(({ batch }) => batch.records.map((r) => r.offset))
    const first = offsets[0] ?? -1
    assert.ok(first <= 700, 'starts at the batch holding the new log start')
    assert.deepEqual(
      offsets,
      Array.from({ length: 2000 - first }, (_, i) => first + i),
      'every offset from there once, in order'
    )
    assert.deepEqual(
      batches.flatMap(({ batch }) => batch.records.map((r) => r.value?.toString())),
      records.slice(first).map((r) => r.value?.toString())
    )
  })
})

describe('reader with one reused decompression buffer', () => {
  it('hands every batch, each valid during onBatch, the same values as a reader with a buffer per batch', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    for (const spec of ['lz4:1', 'zstd:3']) {
      const producer = await kafka.startProducer({
        codec: parseCodecSpec(spec),
        lingerMs: 5,
        batchSizeBytes: 48 * 1024
      })
      for (const record of makeRecords(1500)) await producer.send({ topic, ...record })
      await producer.flush()
    }
    const seen = async (reuseBatchMemory: boolean): Promise<string[]> => {
      const values: string[] = []
      const cluster = createCluster(kafka.connection, kafka.log)
      await cluster.connect()
      try {
        // 8 KiB fetches: many batches through the one buffer, and batches larger than 1 MiB never occur here.
        await new PartitionReader(
          { ...DEFAULT_READER_CONFIG, topics: [topic], reuseBatchMemory, partitionMaxBytes: 64 * 1024 },
          { cluster, admin: kafka.admin, log: kafka.log }
        ).run({
          onBatch: ({ partition, batch }) =>
            batch.forEachValue((bytes, start, end, offset) =>
              values.push(`${partition}:${offset}:${bytes.toString('utf8', start, end)}`)
            ),
          onCorruptBatch: ({ error }) => {
            throw error
          }
        })
      } finally {
        await cluster.disconnect()
      }
      return values
    }
    const fresh = await seen(false)
    assert.equal(fresh.length, 3000)
    assert.deepEqual(await seen(true), fresh)
  })
})
