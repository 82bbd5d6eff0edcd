import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sampleWindows } from '../../../../lib/compare/projection/sample-windows.js'
import { createCluster } from '../../../../lib/kafka/connection.js'
import { RECENT_MS, useTestKafka } from '../../../helpers/kafka.js'

const kafka = useTestKafka()
const MIB = 1024 * 1024

/** Every distinct memory the records' keys and values are views of, and its size. */
function heldBytes(records: ReadonlyArray<{ key: Buffer | null; value: Buffer | null }>): number {
  const held = new Set<ArrayBufferLike>()
  for (const r of records) for (const b of [r.key, r.value]) if (b !== null) held.add(b.buffer)
  return [...held].reduce((n, b) => n + b.byteLength, 0)
}

describe('sampleWindows', () => {
  it('holds about the bytes it samples when its windows start and end inside large batches', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    // Batches of 1 MiB: every window of a 256 KiB sample over 8 windows starts and ends inside one.
    const producer = await kafka.startProducer({
      codec: { codec: 'lz4', level: 1 },
      lingerMs: 60_000,
      batchSizeBytes: MIB
    })
    const value = (i: number): Buffer =>
      Buffer.from(`${String(i).padStart(8, '0')} ${'GET /index.html 200 '.repeat(9)}`)
    await producer.sendMany(
      Array.from({ length: 48_000 }, (_, i) => ({
        topic,
        partition: 0,
        key: null,
        value: value(i),
        timestamp: RECENT_MS + i
      }))
    )
    await producer.flush()
    const cluster = createCluster(kafka.connection, kafka.log)
    await cluster.connect()
    t.after(() => cluster.disconnect())

    const batches: number[] = []
    const sampled = await sampleWindows(
      { cluster, admin: kafka.admin, log: kafka.log },
      topic,
      { bytes: 256 * 1024 },
      8,
      (b) => batches.push(b.uncompressedBytes)
    )
    const records = sampled.windows.flatMap((w) => w.records)
    assert.equal(records.length, sampled.records)
    assert.ok(Math.min(...batches) > 512 * 1024, `the sample's records sit in batches of about 1 MiB: ${batches}`)
    assert.equal(sampled.plan.windows.length, 8, 'eight windows, each inside a batch')
    // Views of the decompressed batches would hold a 1 MiB batch per window: 8 MiB for a 256 KiB sample.
    const held = heldBytes(records)
    assert.ok(held <= 2 * sampled.bytes, `${held} bytes held for a sample of ${sampled.bytes}`)
    for (const w of sampled.windows) {
      const first = Number(w.records[0]?.value?.subarray(0, 8).toString())
      w.records.forEach((r, k) => assert.deepEqual(r.value, value(first + k), 'each copy holds its record, in order'))
    }
  })
})
