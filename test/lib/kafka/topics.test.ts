/**
 * Topic creation against a broker whose default.replication.factor (2) differs from anything squeeze could
 * hard-code: on one node, a topic that takes the broker default cannot be created, one with an explicit 1 can.
 * Always the embedded JVM broker, since the test needs that broker setting.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { randomUUID } from 'node:crypto'
import type { Admin } from 'kafkajs'
import { prepareDestinations } from '../../../lib/copier/destinations.js'
import { startKraftBroker, type EmbeddedBroker } from '../../../lib/embedded-broker/kraft-broker.js'
import { createKafkaClient, DEFAULT_CONNECTION } from '../../../lib/kafka/connection.js'
import { createTopicsAndWait, ensureTopic } from '../../../lib/kafka/topics.js'
import { createLogger } from '../../../lib/log/logger.js'

let broker: EmbeddedBroker
let admin: Admin
before(async () => {
  broker = await startKraftBroker({ serverOverrides: { 'default.replication.factor': '2' } })
  admin = createKafkaClient({ ...DEFAULT_CONNECTION, brokers: [broker.bootstrap] }, createLogger({ level: 'silent', name: 'test' })).admin()
  await admin.connect()
})
after(async () => {
  await admin?.disconnect()
  await broker?.stop()
})

async function replicas(topic: string): Promise<number[]> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
  return topics[0]?.partitions.map((p) => p.replicas.length) ?? []
}

describe('topic creation', () => {
  it('without a replication factor, asks for the broker default (KIP-464) and gets it', async () => {
    const topic = `rf-default-${randomUUID().slice(0, 8)}`
    // The broker refuses because its default, 2, exceeds its single node (an explicit 1 works, next test): proof
    // that the request carried -1 and the broker applied its default.
    await assert.rejects(ensureTopic(admin, topic, 3), /cannot create topic rf-default-\w+: INVALID_REPLICATION_FACTOR/)
    assert.ok(!(await admin.listTopics()).includes(topic))
  })

  it('with an explicit replication factor, uses it', async () => {
    const topic = `rf-one-${randomUUID().slice(0, 8)}`
    assert.equal(await ensureTopic(admin, topic, 3, 1), 'created')
    assert.deepEqual(await replicas(topic), [1, 1, 1])
  })

  it('the copier gives a destination its source topic\'s replication factor, not the broker default', async () => {
    const source = `rf-source-${randomUUID().slice(0, 8)}`
    await createTopicsAndWait(admin, [{ topic: source, numPartitions: 2, replicationFactor: 1 }])
    const created = await prepareDestinations(admin, source, [{ topic: `${source}.zstd`, spec: { codec: 'zstd', level: 3 } }])
    assert.deepEqual(created, [`${source}.zstd`])
    assert.deepEqual(await replicas(`${source}.zstd`), [1, 1])
  })
})
