import assert from 'node:assert/strict'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { after, before, describe, it } from 'node:test'
import {
  createCluster,
  createKafkaClient,
  DEFAULT_CONNECTION,
  type KafkaConnectionConfig
} from '../../lib/kafka/connection.js'
import { createLogger } from '../../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer, type DeliveryFailure } from '../../lib/producer/producer.js'
import { PartitionReader, DEFAULT_READER_CONFIG } from '../../lib/consumer/partition-reader.js'
import { poll } from '../helpers/poll.js'
import { startBrokerBehindProxy, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const log = createLogger({ level: (process.env.SQUEEZE_TEST_LOG_LEVEL ?? 'silent') as 'silent' })
let proxy: TcpProxy
let brokerPort: number
let stopBroker: (() => Promise<void>) | undefined
let connection: KafkaConnectionConfig

before(async () => {
  const started = await startBrokerBehindProxy()
  proxy = started.proxy
  brokerPort = started.broker.brokerPort
  stopBroker = started.stop
  connection = {
    ...DEFAULT_CONNECTION,
    brokers: [`127.0.0.1:${proxy.port}`],
    clientId: 'squeeze-faults',
    requestTimeoutMs: 3000
  }
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  await createTopicsAndWait(admin, [
    { topic: 'stall', numPartitions: 2 },
    { topic: 'cut', numPartitions: 1 }
  ])
  await admin.disconnect()
})
after(async () => {
  await stopBroker?.()
})

describe('seed brokers', () => {
  it('a seed broker given as an IPv6 literal ([::1]:port) is reached, which kafkajs cannot parse', async () => {
    const v6 = await startTcpProxy(0, '::1')
    v6.setTarget(brokerPort)
    try {
      const seeded = { ...connection, brokers: [`[::1]:${v6.port}`] }
      const admin = createKafkaClient(seeded, log).admin()
      await admin.connect()
      const topics = await admin.listTopics()
      await admin.disconnect()
      assert.ok(topics.includes('stall') && topics.includes('cut'), topics.join(','))
      const cluster = createCluster(seeded, log)
      await cluster.connect()
      await cluster.refreshMetadata()
      assert.ok(cluster.findTopicPartitionMetadata('cut').length === 1)
      await cluster.disconnect()
    } finally {
      await v6.close()
    }
  })
})

/** Every value's count, and each partition's values in log order. */
async function countValues(topic: string): Promise<Map<string, number>> {
  return (await readBack(topic)).seen
}

async function readBack(topic: string): Promise<{ seen: Map<string, number>; byPartition: Map<number, string[]> }> {
  const cluster = createCluster(connection, log)
  const admin = createKafkaClient(connection, log).admin()
  await Promise.all([cluster.connect(), admin.connect()])
  const seen = new Map<string, number>()
  const byPartition = new Map<number, string[]>()
  await new PartitionReader({ ...DEFAULT_READER_CONFIG, topics: [topic] }, { cluster, admin, log }).run({
    onBatch: ({ partition, batch }) => {
      const log = byPartition.get(partition) ?? []
      byPartition.set(partition, log)
      for (const r of batch.records) {
        const value = r.value?.toString() ?? ''
        seen.set(value, (seen.get(value) ?? 0) + 1)
        log.push(value)
      }
    },
    onCorruptBatch: ({ error }) => {
      throw error
    }
  })
  await Promise.all([cluster.disconnect(), admin.disconnect()])
  return { seen, byPartition }
}

describe('a stalled or cut connection', () => {
  it('stalled for longer than request.timeout.ms: requests time out, are retried, and every record arrives once it heals', async () => {
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        codec: { codec: 'zstd', level: 1 },
        lingerMs: 10,
        batchSizeBytes: 16 * 1024,
        requestTimeoutMs: 3000,
        deliveryTimeoutMs: 60_000
      },
      { cluster: createCluster(connection, log), log }
    )
    await producer.start()
    const total = 4000
    for (let i = 0; i < total / 2; i++) await producer.send({ topic: 'stall', key: null, value: Buffer.from(`v${i}`) })
    proxy.stall()
    for (let i = total / 2; i < total; i++)
      await producer.send({ topic: 'stall', key: null, value: Buffer.from(`v${i}`) })
    await new Promise((resolve) => setTimeout(resolve, 5000))
    proxy.heal()
    await producer.close()
    const stats = producer.snapshot()
    console.log(`stall: ${stats.retries} retries, ${stats.recordsAcked} acknowledged, ${stats.recordsFailed} failed`)
    assert.equal(stats.recordsFailed, 0)
    assert.equal(stats.recordsAcked, total)
    assert.ok(stats.retries > 0, 'the stalled requests timed out and were retried')
    const { seen, byPartition } = await readBack('stall')
    assert.equal(seen.size, total, 'nothing lost')
    assert.ok(
      [...seen.values()].every((n) => n === 1),
      'nothing duplicated (idempotent retries)'
    )
    // Several batches per partition were in flight when the link stalled; they were resent in order.
    for (const [partition, values] of byPartition) {
      const indices = values.map((v) => Number(v.slice(1)))
      assert.ok(
        indices.every((n, i) => i === 0 || n > (indices[i - 1] as number)),
        `partition ${partition} kept send order`
      )
    }
  })

  it('cut for longer than delivery.timeout.ms: the batch fails with a clear error instead of hanging, and the producer recovers', async () => {
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        codec: { codec: 'lz4', level: 1 },
        lingerMs: 10,
        requestTimeoutMs: 2000,
        deliveryTimeoutMs: 4000,
        retryBackoffMaxMs: 500
      },
      { cluster: createCluster(connection, log), log }
    )
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((f) => failures.push(f))
    await producer.start()
    await producer.send({ topic: 'cut', key: null, value: Buffer.from('before') })
    await producer.flush()
    proxy.cut()
    await producer.send({ topic: 'cut', key: null, value: Buffer.from('during') })
    await producer.flush() // resolves once the batch is given up on: no hang
    assert.equal(failures.length, 1)
    assert.equal(failures[0]?.error.code, 'SQUEEZE_ERR_TIMEOUT')
    assert.match(failures[0]?.error.message ?? '', /not acknowledged within delivery\.timeout\.ms 4000/)
    proxy.heal()
    await producer.send({ topic: 'cut', key: null, value: Buffer.from('after') })
    await producer.close()
    const stats = producer.snapshot()
    assert.equal(stats.recordsFailed, 1)
    assert.equal(stats.recordsAcked, 2)
    const seen = await countValues('cut')
    assert.ok(seen.has('before') && seen.has('after'), 'records before the cut and after it healed arrived')
  })
})

describe('compression threads (squeeze.compression.threads) through a cut connection', () => {
  for (const threads of [1, 2, 3]) {
    it(`${threads} thread(s): every record arrives once, each partition in send order, across the retries`, async () => {
      const topic = `pool-${threads}`
      const admin = createKafkaClient(connection, log).admin()
      await admin.connect()
      await createTopicsAndWait(admin, [{ topic, numPartitions: 4 }])
      await admin.disconnect()
      const producer = new Producer(
        {
          ...DEFAULT_PRODUCER_CONFIG,
          codec: { codec: 'zstd', level: 6 },
          lingerMs: 5,
          batchSizeBytes: 32 * 1024,
          compressionThreads: threads,
          compressionInlineSeconds: 0,
          requestTimeoutMs: 3000,
          deliveryTimeoutMs: 60_000,
          retryBackoffMaxMs: 200
        },
        { cluster: createCluster(connection, log), log }
      )
      await producer.start()
      // Until the first compression thread is ready, batches are sealed on the event loop; this test is about the
      // pool, so its first thread starts with the producer (inline seconds 0) and it sends once that thread takes
      // batches (the others start as the ready ones are found busy).
      await poll(
        'the first compression thread to be ready',
        async () => producer.compressionLoad().threads.some((t) => t.ready),
        (ready) => ready
      )
      const total = 24_000
      const slice = 6000
      const record = (i: number) => ({
        topic,
        key: Buffer.from(`k${i % 16}`),
        value: Buffer.from(`v${i} GET /static/${i % 97}.css 200 ${(i * 7919) % 50000}`)
      })
      // Whole slices without an await per record: about ten batches close in one tick, so every thread gets some.
      const send = async (from: number, to: number): Promise<void> => {
        for (let i = from; i < to; i += slice)
          await producer.sendMany(Array.from({ length: Math.min(slice, to - i) }, (_, j) => record(i + j)))
      }
      await send(0, total / 2)
      proxy.cut()
      await send(total / 2, total)
      await poll(
        'a produce request to fail and be retried',
        async () => producer.snapshot().retries,
        (n) => n > 0
      )
      proxy.heal()
      await producer.flush()
      const load = producer.compressionLoad()
      await producer.close()
      const stats = producer.snapshot()
      assert.equal(stats.recordsFailed, 0)
      assert.equal(stats.recordsAcked, total)
      assert.equal(
        load.threads.filter((t) => t.batches > 0).length,
        threads,
        `every thread compressed batches: ${JSON.stringify(load.threads)}`
      )
      const { seen, byPartition } = await readBack(topic)
      assert.equal(seen.size, total, 'nothing lost')
      assert.ok(
        [...seen.values()].every((n) => n === 1),
        'nothing duplicated (idempotent retries)'
      )
      for (const [partition, values] of byPartition) {
        const indices = values.map((v) => Number(v.slice(1, v.indexOf(' '))))
        assert.ok(
          indices.every((n, i) => i === 0 || n > (indices[i - 1] as number)),
          `partition ${partition} kept send order`
        )
      }
    })
  }
})
