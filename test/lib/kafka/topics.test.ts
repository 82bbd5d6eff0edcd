/**
 * Topic creation against a broker whose default.replication.factor (2) differs from anything squeeze could
 * hard-code: on one node, a topic that takes the broker default cannot be created, one with an explicit 1 can.
 * The broker also has topic deletion switched off, as some clusters do, so a deletion is refused.
 * Always the embedded JVM broker, since the test needs those broker settings.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { randomUUID } from 'node:crypto'
import type { Admin } from 'kafkajs'
import { prepareDestinations } from '../../../lib/copier/destinations.js'
import { startKraftBroker, type EmbeddedBroker } from '../../../lib/embedded-broker/kraft-broker.js'
import { createKafkaClient, DEFAULT_CONNECTION } from '../../../lib/kafka/connection.js'
import { createTopicsAndWait, deleteTopicsAndWait, ensureTopic } from '../../../lib/kafka/topics.js'
import { createLogger } from '../../../lib/log/logger.js'
import { ErrorCodes } from '../../../lib/errors.js'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../helpers/ports.js'
import { runSqueeze } from '../../helpers/squeeze-cli.js'

let broker: EmbeddedBroker
let admin: Admin
before(async () => {
  broker = await startKraftBroker({
    serverOverrides: { 'default.replication.factor': '2', 'delete.topic.enable': 'false' }
  })
  admin = createKafkaClient(
    { ...DEFAULT_CONNECTION, brokers: [broker.bootstrap] },
    createLogger({ level: 'silent', name: 'test' })
  ).admin()
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
    await assert.rejects(ensureTopic(admin, topic, 3), (err: unknown) => {
      assert.match(String(err), /cannot create topic rf-default-\w+: INVALID_REPLICATION_FACTOR/)
      assert.equal(
        (err as { code?: string }).code,
        ErrorCodes.TOPIC_REFUSED,
        'a refusal no retry fixes has its own code'
      )
      return true
    })
    assert.ok(!(await admin.listTopics()).includes(topic))
  })

  it('squeeze produce whose topic the cluster refuses: without a wait, one line and exit 1 at once', async () => {
    const topic = `refused-${randomUUID().slice(0, 8)}`
    const run = await runSqueeze([
      'produce',
      '--brokers',
      broker.bootstrap,
      '--topic',
      topic,
      '--create-partitions',
      '1',
      '--records',
      '10'
    ])
    assert.equal(run.code, 1)
    assert.match(
      run.stderr,
      new RegExp(`squeeze: cannot create topic ${topic}: INVALID_REPLICATION_FACTOR.*\\[SQUEEZE_ERR_TOPIC_REFUSED\\]`)
    )
  })

  it('squeeze produce waiting for a topic the cluster refuses: /readyz says so and the refusal is counted in a metric', async () => {
    const topic = `refused-${randomUUID().slice(0, 8)}`
    const port = await freePort()
    const cli = fileURLToPath(new URL('../../../services/cli/main.js', import.meta.url))
    const child = spawn(
      process.execPath,
      [
        cli,
        'produce',
        '--brokers',
        broker.bootstrap,
        '--topic',
        topic,
        '--create-partitions',
        '1',
        '--rate',
        '10',
        '--wait-for-brokers-s',
        '120',
        '--metrics-port',
        String(port),
        '--metrics-host',
        '127.0.0.1'
      ],
      { stdio: 'ignore' }
    )
    try {
      const get = async (path: string): Promise<{ status: number; body: string } | undefined> => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) })
          return { status: res.status, body: await res.text() }
        } catch {
          return undefined
        }
      }
      const deadline = Date.now() + 60_000
      let readyz: { status: number; body: string } | undefined
      let counted = false
      while (Date.now() < deadline && !(counted && readyz?.body.includes('topic creation refused') === true)) {
        assert.equal(child.exitCode, null, 'the service keeps waiting instead of exiting')
        readyz = await get('/readyz')
        const metrics = await get('/metrics')
        counted =
          metrics?.body.includes(
            `squeeze_produce_unrecoverable_errors_total{topic="${topic}",error="INVALID_REPLICATION_FACTOR"}`
          ) ?? false
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      assert.equal(readyz?.status, 503)
      assert.match(readyz?.body ?? '', /topic creation refused \(SQUEEZE_ERR_TOPIC_REFUSED\)/)
      assert.ok(counted, 'squeeze_produce_unrecoverable_errors_total counts the refusal by its Kafka error')
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('with an explicit replication factor, uses it', async () => {
    const topic = `rf-one-${randomUUID().slice(0, 8)}`
    assert.equal(await ensureTopic(admin, topic, 3, 1), 'created')
    assert.deepEqual(await replicas(topic), [1, 1, 1])
  })

  it("the copier gives a destination its source topic's replication factor, not the broker default", async () => {
    const source = `rf-source-${randomUUID().slice(0, 8)}`
    await createTopicsAndWait(admin, [{ topic: source, numPartitions: 2, replicationFactor: 1 }])
    const created = await prepareDestinations(admin, source, [
      { topic: `${source}.zstd`, spec: { codec: 'zstd', level: 3 } }
    ])
    assert.deepEqual(created, [`${source}.zstd`])
    assert.deepEqual(await replicas(`${source}.zstd`), [1, 1])
  })
})

describe('topic deletion', () => {
  it('a cluster that refuses it: fails at once, naming the topics still there and how to delete them', async () => {
    const topic = `no-delete-${randomUUID().slice(0, 8)}`
    await createTopicsAndWait(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }])
    const started = Date.now()
    await assert.rejects(deleteTopicsAndWait(admin, [topic, 'never-created']), (err: unknown) => {
      assert.equal((err as { code?: string }).code, ErrorCodes.TOPIC_REFUSED)
      // Kafka answers a DeleteTopics older than v3 (kafkajs's) with INVALID_REQUEST when deletion is off.
      assert.match(
        String(err),
        new RegExp(`could not delete topic ${topic}: INVALID_REQUEST: .*; delete it with kafka-topics.sh --delete$`)
      )
      return true
    })
    // A refusal is not retried: the retries would take many seconds.
    assert.ok(Date.now() - started < 10_000, `refused after ${Date.now() - started} ms`)
    assert.ok((await admin.listTopics()).includes(topic))
  })

  it('nothing to delete: topics that do not exist are already done', async () => {
    await deleteTopicsAndWait(admin, [`never-${randomUUID().slice(0, 8)}`])
    await deleteTopicsAndWait(admin, [])
  })
})
