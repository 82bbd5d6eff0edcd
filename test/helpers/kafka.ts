import { randomUUID } from 'node:crypto'
import { after, before, type TestContext } from 'node:test'
import type { Admin } from 'kafkajs'
import { BROKER_DEFAULT_REPLICATION_FACTOR, createTopicsAndWait } from '../../lib/kafka/topics.js'
import {
  createCluster,
  createKafkaClient,
  DEFAULT_CONNECTION,
  type KafkaConnectionConfig
} from '../../lib/kafka/connection.js'
import { createLogger, type Logger } from '../../lib/log/logger.js'
import {
  acquireBroker,
  killEmbeddedBrokersOnExit,
  type AcquiredBroker
} from '../../lib/embedded-broker/select-broker.js'
import { startKraftCluster, type EmbeddedCluster } from './kraft-cluster.js'
import { startBrokerBehindProxy, type TcpProxy } from './tcp-proxy.js'
import { Producer, DEFAULT_PRODUCER_CONFIG, type ProducerConfig } from '../../lib/producer/producer.js'
import { PartitionReader, DEFAULT_READER_CONFIG, type ReaderConfig } from '../../lib/consumer/partition-reader.js'
import type { ReadBatch } from '../../lib/protocol/record-batch-reader.js'

/** One broker per test file, with an admin client and helpers that clean up after each test. */
/** Record times an hour back: the broker's 7-day retention deletes older segments while a test still reads them. */
export const RECENT_MS = Date.now() - 3_600_000

export interface TestKafka {
  readonly broker: AcquiredBroker
  readonly connection: KafkaConnectionConfig
  readonly admin: Admin
  readonly log: Logger
  createTopic(
    t: TestContext | undefined,
    options?: { partitions?: number; configs?: Record<string, string>; name?: string }
  ): Promise<string>
  startProducer(config?: Partial<ProducerConfig>): Promise<Producer>
  readAll(
    topics: string[],
    config?: Partial<ReaderConfig>
  ): Promise<Array<{ topic: string; partition: number; batch: ReadBatch }>>
  stop(): Promise<void>
}

/** A three-node cluster (3 controller voters, replication.factor=3, min.insync.replicas=2) whose nodes tests kill and restart. */
export interface TestKafkaCluster extends TestKafka {
  readonly cluster: EmbeddedCluster
}

function testLogger(): Logger {
  return createLogger({ level: (process.env.SQUEEZE_TEST_LOG_LEVEL ?? 'silent') as 'silent', name: 'squeeze-test' })
}

/** `jvmOnly`: the file needs the embedded broker's internals (see AcquireBrokerOptions.jvmOnly). */
export async function startTestKafka(options: { jvmOnly?: boolean } = {}): Promise<TestKafka> {
  const log = testLogger()
  // The harness owns the process: a test file that ends or is force-exited takes its broker with it.
  killEmbeddedBrokersOnExit()
  return testKafkaOn(await acquireBroker((msg: string) => log.info(msg), { jvmOnly: options.jvmOnly }), log)
}

/**
 * The broker of a test file (or of the describe block it is called in): started in `before`, stopped in `after`.
 * The object reads through to it, so call sites stay `kafka.admin`, `kafka.createTopic(t)`.
 */
export function useTestKafka(options: { jvmOnly?: boolean } = {}): TestKafka {
  let started: TestKafka | undefined
  before(async () => {
    started = await startTestKafka(options)
  })
  after(async () => {
    await started?.stop()
  })
  const current = (): TestKafka => {
    if (started === undefined)
      throw new Error('useTestKafka: the broker is used before its before() hook ran; use it inside a test or hook')
    return started
  }
  return {
    get broker() {
      return current().broker
    },
    get connection() {
      return current().connection
    },
    get admin() {
      return current().admin
    },
    get log() {
      return current().log
    },
    createTopic: (t, o) => current().createTopic(t, o),
    startProducer: (c) => current().startProducer(c),
    readAll: (topics, c) => current().readAll(topics, c),
    stop: () => current().stop()
  }
}

/**
 * Always the embedded JVMs, whatever KAFKA_BROKERS says: the tests on it SIGKILL and restart nodes. Topics
 * created here take the cluster's default replication factor (3).
 */
export async function startTestKafkaCluster(): Promise<TestKafkaCluster> {
  const log = testLogger()
  killEmbeddedBrokersOnExit()
  const t0 = Date.now()
  const cluster = await startKraftCluster()
  log.info(
    `kafka: embedded 3-node cluster at ${cluster.brokers.join(',')} in ${Date.now() - t0} ms; data ${cluster.dataDir}`
  )
  const broker: AcquiredBroker = { brokers: cluster.brokers, kind: 'jvm', stop: () => cluster.stop() }
  try {
    return { ...(await testKafkaOn(broker, log, BROKER_DEFAULT_REPLICATION_FACTOR)), cluster }
  } catch (e) {
    await cluster.stop()
    throw e
  }
}

/** A TestKafka whose broker every client reaches through a proxy the test can cut (see startBrokerBehindProxy). */
export interface TestKafkaBehindProxy extends TestKafka {
  readonly proxy: TcpProxy
}

export async function startTestKafkaBehindProxy(): Promise<TestKafkaBehindProxy> {
  const log = testLogger()
  killEmbeddedBrokersOnExit()
  const behind = await startBrokerBehindProxy()
  const broker: AcquiredBroker = { brokers: [behind.bootstrap], kind: 'jvm', stop: () => behind.stop() }
  try {
    return { ...(await testKafkaOn(broker, log)), proxy: behind.proxy }
  } catch (e) {
    await behind.stop()
    throw e
  }
}

async function testKafkaOn(broker: AcquiredBroker, log: Logger, replicationFactor = 1): Promise<TestKafka> {
  const connection: KafkaConnectionConfig = { ...DEFAULT_CONNECTION, brokers: broker.brokers, clientId: 'squeeze-test' }
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  const producers: Producer[] = []
  return {
    broker,
    connection,
    admin,
    log,
    async createTopic(t, options = {}) {
      const topic = options.name ?? `test-${randomUUID().slice(0, 8)}`
      await createTopicsAndWait(admin, [
        {
          topic,
          numPartitions: options.partitions ?? 1,
          replicationFactor,
          configEntries: Object.entries(options.configs ?? {}).map(([name, value]) => ({ name, value }))
        }
      ])
      t?.after(async () => {
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
      })
      return topic
    },
    async startProducer(config = {}) {
      const producer = new Producer(
        { ...DEFAULT_PRODUCER_CONFIG, ...config },
        { cluster: createCluster(connection, log), log }
      )
      await producer.start()
      producers.push(producer)
      return producer
    },
    async readAll(topics, config = {}) {
      const out: Array<{ topic: string; partition: number; batch: ReadBatch }> = []
      const cluster = createCluster(connection, log)
      await cluster.connect()
      try {
        const reader = new PartitionReader({ ...DEFAULT_READER_CONFIG, topics, ...config }, { cluster, admin, log })
        await reader.run({
          onBatch: ({ topic, partition, batch }) => void out.push({ topic, partition, batch }),
          onCorruptBatch: ({ error }) => {
            throw error
          }
        })
      } finally {
        await cluster.disconnect()
      }
      return out
    },
    async stop() {
      await Promise.all(producers.map((p) => p.close().catch(() => undefined)))
      await admin.disconnect().catch(() => undefined)
      await broker.stop()
    }
  }
}
