import assert from 'node:assert/strict'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { describe, it } from 'node:test'
import { createCluster } from '../../lib/kafka/connection.js'
import { startKraftBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { createGenerator } from '../../lib/generators/index.js'
import { readHttpRequest } from '../../lib/formats/index.js'
import { useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()

describe('batching', () => {
  it('linger.ms=100 with a steady keyless stream fills batches to at least 90% of what batch.size allows', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 3 })
    const batchSize = 16384
    const producer = await kafka.startProducer({
      codec: { codec: 'lz4', level: 1 },
      lingerMs: 100,
      batchSizeBytes: batchSize
    })
    const value = Buffer.alloc(200, 'x')
    const total = 10_000
    for (let i = 0; i < total; i++) {
      await producer.send({ topic, key: null, value })
      if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 5)) // steady, not one burst
    }
    await producer.flush()
    const stats = producer.snapshot()
    // A 200-byte keyless record is 200 bytes of value plus 8 bytes of framing in the v2 format.
    const allowed = Math.floor((batchSize - 61) / 208)
    const mean = stats.recordsAcked / stats.batchesAcked
    console.log(`records per batch: mean ${mean.toFixed(1)}, batch.size allows ${allowed}`)
    assert.equal(stats.recordsAcked, total)
    assert.ok(mean >= 0.9 * allowed, `mean ${mean} < 90% of ${allowed}`)
  })
})

describe('linger.ms closes batches on its timer', () => {
  const value = Buffer.from('GET /index.html 200')
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

  async function recordsPerBatch(topic: string): Promise<number[]> {
    return (await kafka.readAll([topic])).map(({ batch }) => batch.records.length)
  }

  it('linger.ms=200 with a record every 10 ms sends batches of about 20 records', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    // batch.size (1 MiB) holds every record, so only the linger timer can close a batch before flush().
    const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 }, lingerMs: 200 })
    const total = 300
    // Records follow a 10 ms schedule (a late one is sent at once), so a slow machine does not thin the stream.
    const start = Date.now()
    for (let i = 0; i < total; i++) {
      const wait = start + i * 10 - Date.now()
      if (wait > 0) await sleep(wait)
      await producer.send({ topic, key: null, value })
    }
    await producer.flush()
    const sizes = await recordsPerBatch(topic)
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      total
    )
    // 200 ms of records at one per 10 ms; a late timer adds records. A timer that never fired leaves one batch
    // of 300 (closed by flush), a producer that ignored linger.ms sends batches of 1: the bounds catch both.
    const mean = total / sizes.length
    t.diagnostic(`records per batch: mean ${mean.toFixed(1)} over ${sizes.length} batches`)
    assert.ok(
      mean >= 10 && mean <= 30,
      `mean ${mean.toFixed(1)} records per batch over ${sizes.length} batches: ${sizes.join(' ')}`
    )
  })

  it('linger.ms=0 with a record every 10 ms sends every record in a batch of its own', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 }, lingerMs: 0 })
    const total = 60
    // Deterministic, not timing: linger.ms=0 arms a 1 ms timer when a record opens a batch, and the 10 ms pause
    // that follows is a later timer, so the batch is closed before the next record. Closing never waits for
    // the in-flight request limit (1 per partition until the first ack, then 5): closed batches queue behind
    // it and leave as they are, so a slow broker cannot merge two records into one batch either.
    for (let i = 0; i < total; i++) {
      await producer.send({ topic, key: null, value })
      await sleep(10)
    }
    await producer.flush()
    const sizes = await recordsPerBatch(topic)
    assert.equal(sizes.length, total, `batch sizes: ${sizes.join(' ')}`)
    assert.ok(sizes.every((n) => n === 1))
  })
})

describe('sendMany', () => {
  it('accepts records in order through buffer.memory waits, and stops at a record it refuses, having taken the ones before', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    // buffer.memory of two 16 KiB batches: 4,000 records of ~100 bytes must wait for acknowledgements on the way.
    const producer = await kafka.startProducer({
      codec: { codec: 'zstd', level: 1 },
      lingerMs: 5,
      batchSizeBytes: 16 * 1024,
      bufferMemoryBytes: 32 * 1024,
      maxRequestSizeBytes: 64 * 1024
    })
    const records = Array.from({ length: 4000 }, (_, i) => ({
      topic,
      key: null,
      value: Buffer.from(`${i} `.padEnd(100, 'x'))
    }))
    await producer.sendMany(records)
    await assert.rejects(
      producer.sendMany([
        { topic, key: null, value: Buffer.from('before the big one') },
        { topic, key: null, value: Buffer.alloc(100 * 1024) },
        { topic, key: null, value: Buffer.from('never taken') }
      ]),
      /exceeds max\.request\.size/
    )
    await producer.flush()
    assert.equal(producer.snapshot().recordsAcked, 4001)
    const values = (await kafka.readAll([topic])).flatMap(({ batch }) =>
      batch.records.map((r) => r.value?.toString() ?? '')
    )
    assert.deepEqual(values, [...records.map((r) => r.value.toString()), 'before the big one'])
  })
})

describe('codec levels are per producer instance', () => {
  it('zstd 1 and zstd 19 in one process produce different, correct sizes', async (t) => {
    const [fastTopic, strongTopic] = [await kafka.createTopic(t), await kafka.createTopic(t)]
    const fast = await kafka.startProducer({ codec: { codec: 'zstd', level: 1 } })
    const strong = await kafka.startProducer({ codec: { codec: 'zstd', level: 19 } })
    const generator = createGenerator('http', { seed: 5 })
    const records = Array.from({ length: 4000 }, () => generator.next())
    // Interleaved sends: if the level were process-global, the two would compress alike.
    for (const r of records) {
      await fast.send({ topic: fastTopic as string, key: r.key, value: r.value, timestamp: r.timestampMs })
      await strong.send({ topic: strongTopic as string, key: r.key, value: r.value, timestamp: r.timestampMs })
    }
    await Promise.all([fast.flush(), strong.flush()])
    const a = fast.snapshot()
    const b = strong.snapshot()
    console.log(
      `zstd:1 ${a.compressedBytes} bytes, zstd:19 ${b.compressedBytes} bytes for ${a.uncompressedBytes} uncompressed`
    )
    assert.equal(a.uncompressedBytes, b.uncompressedBytes)
    assert.ok(b.compressedBytes < a.compressedBytes * 0.97, 'level 19 must compress noticeably smaller than level 1')
    for (const topic of [fastTopic as string, strongTopic as string]) {
      const batches = await kafka.readAll([topic])
      const values = batches.flatMap(({ batch }) => batch.records.map((r) => r.value))
      assert.equal(values.length, records.length)
      values.forEach((v, i) => assert.deepEqual(v, records[i]?.value))
      assert.equal(readHttpRequest(values[0] as Buffer).host, readHttpRequest(records[0]?.value as Buffer).host)
    }
  })
})

describe('backpressure', () => {
  it('with the broker down, memory stays under buffer.memory and every record arrives once it is back', async (t) => {
    // Needs a broker this test may stop: always its own JVM broker, whatever KAFKA_BROKERS says.
    const broker = await startKraftBroker()
    t.after(() => broker.stop())
    const connection = { ...kafka.connection, brokers: [broker.bootstrap] }
    const admin = (await import('../../lib/kafka/connection.js')).createKafkaClient(connection, kafka.log).admin()
    await admin.connect()
    const topic = 'backpressure'
    await createTopicsAndWait(admin, [{ topic, numPartitions: 2 }])
    await admin.disconnect()

    const bufferMemory = 1024 * 1024
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        codec: { codec: 'none', level: null },
        lingerMs: 20,
        batchSizeBytes: 64 * 1024,
        bufferMemoryBytes: bufferMemory,
        retryBackoffMaxMs: 500
      },
      { cluster: createCluster(connection, kafka.log), log: kafka.log }
    )
    await producer.start()
    let peak = 0
    const sampler = setInterval(() => (peak = Math.max(peak, producer.bufferedBytes)), 5)
    t.after(() => clearInterval(sampler))

    const total = 30_000
    const value = (i: number) => Buffer.from(`record ${i} `.padEnd(150, '.'))
    let sent = 0
    const sending = (async () => {
      for (let i = 0; i < total; i++) {
        await producer.send({ topic, key: Buffer.from(`k${i % 10}`), value: value(i) })
        sent++
        if (i === 5000) await broker.halt() // the outage starts mid-stream
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 4000))
    const sentDuringOutage = sent
    assert.ok(sentDuringOutage < total, 'intake must block while the broker is down and the buffer is full')
    assert.ok(producer.bufferedBytes <= bufferMemory)
    await broker.resume()
    await sending
    await producer.close()
    clearInterval(sampler)
    const stats = producer.snapshot()
    console.log(
      `accepted during outage: ${sentDuringOutage}, peak buffered ${peak} of ${bufferMemory}, retries ${stats.retries}`
    )
    assert.ok(peak <= bufferMemory, `peak ${peak} > buffer.memory ${bufferMemory}`)
    assert.equal(stats.recordsFailed, 0)
    assert.equal(stats.recordsAcked, total)

    const readAdmin = (await import('../../lib/kafka/connection.js')).createKafkaClient(connection, kafka.log).admin()
    await readAdmin.connect()
    const { PartitionReader, DEFAULT_READER_CONFIG } = await import('../../lib/consumer/partition-reader.js')
    const cluster = createCluster(connection, kafka.log)
    await cluster.connect()
    const seen = new Map<string, number>()
    const lastIndexByKey = new Map<string, number>()
    let outOfOrder = 0
    await new PartitionReader(
      { ...DEFAULT_READER_CONFIG, topics: [topic] },
      { cluster, admin: readAdmin, log: kafka.log }
    ).run({
      onBatch: ({ batch }) => {
        for (const r of batch.records) {
          const v = r.value?.toString() ?? ''
          seen.set(v, (seen.get(v) ?? 0) + 1)
          // Each key lives on one partition, so its records must come back in send order.
          const index = Number(v.split(' ')[1])
          const key = r.key?.toString() ?? ''
          if (index <= (lastIndexByKey.get(key) ?? -1)) outOfOrder++
          lastIndexByKey.set(key, index)
        }
      },
      onCorruptBatch: ({ error }) => {
        throw error
      }
    })
    await cluster.disconnect()
    await readAdmin.disconnect()
    assert.equal(seen.size, total, 'every record arrived')
    assert.ok(
      [...seen.values()].every((n) => n === 1),
      'no record arrived twice (idempotent retries)'
    )
    assert.equal(outOfOrder, 0, 'per-partition order held across the outage')
  })
})
