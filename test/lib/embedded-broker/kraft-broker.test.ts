/**
 * The embedded JVM broker itself (whatever KAFKA_BROKERS says: these tests read its segment files and restart
 * it), driven with kafkajs and with Kafka's own Java tools. Tests run in order and share the topic.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import kafkajs from 'kafkajs'
import type { Admin, Kafka as KafkaClient } from 'kafkajs'
import type { AcquiredBroker } from '../../../lib/embedded-broker/select-broker.js'
import { startKraftBroker } from '../../../lib/embedded-broker/kraft-broker.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../../lib/embedded-broker/java-tools.js'

const { Kafka, CompressionTypes, ConfigResourceTypes, logLevel } = kafkajs

const COUNT = 100
const values = Array.from({ length: COUNT }, (_, i) => `squeeze-value-${String(i).padStart(3, '0')}`)

async function consumeAll(kafka: KafkaClient, topic: string, groupId: string, expected: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId, heartbeatInterval: 500, sessionTimeout: 10_000, readUncommitted: false })
  const got: string[] = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommitInterval: 100,
      eachMessage: async ({ message }) => {
        got.push(message.value?.toString('utf8') ?? '')
      }
    })
    const deadline = Date.now() + 30_000
    while (got.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  } finally {
    await consumer.disconnect() // commits the consumed offsets
  }
  return got
}

describe('embedded Kafka broker', { timeout: 240_000 }, () => {
  let acquired: AcquiredBroker
  let kafka: KafkaClient
  let admin: Admin
  const topic = `squeeze-it-${Date.now()}`

  before(async () => {
    const t0 = Date.now()
    const embedded = await startKraftBroker()
    acquired = { brokers: [embedded.bootstrap], kind: 'jvm', stop: () => embedded.stop(), embedded }
    console.log(`broker (${acquired.kind}) ready in ${Date.now() - t0} ms`)
    kafka = new Kafka({ clientId: 'squeeze-test', brokers: acquired.brokers, logLevel: logLevel.WARN })
    admin = kafka.admin()
    await admin.connect()
  })

  after(async () => {
    await admin?.disconnect().catch(() => {})
    await acquired?.stop()
    if (acquired?.embedded !== undefined && process.env['SQUEEZE_KEEP_BROKER_DATA'] !== '1') {
      assert.equal(existsSync(acquired.embedded.dataDir), false, 'stop() removes the temp data dir')
      assert.equal(acquired.embedded.pid(), undefined)
    }
  })

  test('createTopics with configEntries, fetchTopicMetadata', async () => {
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }
      ]
    })
    assert.equal(created, true)
    const meta = await admin.fetchTopicMetadata({ topics: [topic] })
    assert.equal(meta.topics[0]?.partitions.length, 3)
  })

  test('kafkajs producer (GZIP, acks -1) then a consumer group reads all 100', async () => {
    const producer = kafka.producer()
    await producer.connect()
    try {
      const res = await producer.send({
        topic,
        acks: -1,
        compression: CompressionTypes.GZIP,
        messages: values.map((value, i) => ({ key: `k${i}`, value }))
      })
      assert.ok(res.every((r) => r.errorCode === 0))
    } finally {
      await producer.disconnect()
    }
    const groupId = `${topic}-group`
    const got = await consumeAll(kafka, topic, groupId, COUNT)
    assert.deepEqual([...got].sort(), values)
    const committed = await admin.fetchOffsets({ groupId, topics: [topic] })
    const total = committed[0]?.partitions.reduce((n, p) => n + Number(p.offset), 0)
    assert.equal(total, COUNT, 'the group committed its offsets')
  })

  test('describeConfigs of the topic', async () => {
    const res = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['compression.type', 'retention.ms'] }]
    })
    const entries = new Map(res.resources[0]?.configEntries.map((c) => [c.configName, c.configValue]))
    assert.equal(entries.get('compression.type'), 'producer')
    assert.equal(entries.get('retention.ms'), '3600000')
  })

  test('transactional producer commit is seen by a read-committed consumer, abort is not', async () => {
    const txTopic = `${topic}-tx`
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: txTopic, numPartitions: 1 }] })
    const producer = kafka.producer({ transactionalId: `${txTopic}-id`, idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      const ok = await producer.transaction()
      await ok.send({
        topic: txTopic,
        compression: CompressionTypes.GZIP,
        messages: [{ value: 'committed-1' }, { value: 'committed-2' }]
      })
      await ok.commit()
      const ko = await producer.transaction()
      await ko.send({ topic: txTopic, messages: [{ value: 'aborted' }] })
      await ko.abort()
    } finally {
      await producer.disconnect()
    }
    const got = await consumeAll(kafka, txTopic, `${txTopic}-group`, 2)
    await new Promise((r) => setTimeout(r, 500))
    assert.deepEqual(got, ['committed-1', 'committed-2'])
    await admin.deleteTopics({ topics: [txTopic] })
  })

  test('Java console consumer reads the 100 values', async () => {
    const res = await runKafkaJavaTool(
      KafkaMainClasses.CONSOLE_CONSUMER,
      [
        '--bootstrap-server',
        acquired.brokers.join(','),
        '--topic',
        topic,
        '--from-beginning',
        '--max-messages',
        String(COUNT),
        '--timeout-ms',
        '30000'
      ],
      { timeoutMs: 60_000 }
    )
    assert.equal(res.code, 0, res.stderr)
    const lines = res.stdout.split('\n').filter((l) => l.startsWith('squeeze-value-'))
    assert.deepEqual(lines.sort(), values)
  })

  test('DumpLogSegments shows gzip batches in the partition segments', async () => {
    const embedded = acquired.embedded
    assert.ok(embedded)
    const files = readdirSync(embedded.kafkaLogDir)
      .filter((d) => d.startsWith(`${topic}-`) && /-\d+$/.test(d))
      .map((d) => join(embedded.kafkaLogDir, d, '00000000000000000000.log'))
    assert.equal(files.length, 3)
    const res = await runKafkaJavaTool(
      KafkaMainClasses.DUMP_LOG_SEGMENTS,
      ['--files', files.join(','), '--print-data-log', '--deep-iteration'],
      {
        timeoutMs: 60_000
      }
    )
    assert.equal(res.code, 0, res.stderr)
    // "baseOffset: 0 lastOffset: 33 count: 34 … magic: 2 compresscodec: gzip crc: … isvalid: true"
    const batches = res.stdout.split('\n').filter((l) => l.startsWith('baseOffset:'))
    assert.ok(batches.length >= 1, res.stdout.slice(0, 2000))
    for (const b of batches) assert.match(b, /compresscodec: gzip/)
    const records = res.stdout.split('\n').filter((l) => l.startsWith('| offset:'))
    assert.equal(records.length, COUNT)
    assert.match(res.stdout, /payload: squeeze-value-000/)
  })

  test('restart() keeps the data', async () => {
    const embedded = acquired.embedded
    assert.ok(embedded?.restart)
    const pidBefore = embedded.pid()
    const t0 = Date.now()
    await embedded.restart()
    console.log(`restart took ${Date.now() - t0} ms`)
    assert.notEqual(embedded.pid(), pidBefore)
    // The old admin's connection died with the JVM; kafkajs reconnects on the next request.
    const got = await consumeAll(kafka, topic, `${topic}-after-restart`, COUNT)
    assert.deepEqual([...got].sort(), values)
  })

  test('deleteTopics', async () => {
    await admin.deleteTopics({ topics: [topic] })
    const deadline = Date.now() + 10_000
    let topics = await admin.listTopics()
    while (topics.includes(topic) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200))
      topics = await admin.listTopics()
    }
    assert.equal(topics.includes(topic), false)
  })
})
