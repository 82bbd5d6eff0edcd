/**
 * The three-node cluster (3 KRaft voters, replication.factor=3, min.insync.replicas=2), started once for this
 * file (a start costs minutes on two cores): compare and a consumer group on it, then nodes SIGKILLed, shut down
 * and restarted under squeeze's producer and copier, every record read back to count what was lost or
 * duplicated. Cases without a node fault come first; before each case every node is up and every replica in sync.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, beforeEach, describe, it } from 'node:test'
import { Ajv } from 'ajv'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { defaultDestination } from '../../lib/copier/copier.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import type { EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { COORDINATOR_TYPES } from '../../lib/kafka/kafkajs-internals.js'
import type { ProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { errorMessage } from '../../lib/errors.js'
import { retry } from '../../lib/retry.js'
import { scaleKillAndAdd } from '../helpers/consumer-group.js'
import { RECENT_MS, startTestKafkaCluster, type TestKafkaCluster } from '../helpers/kafka.js'
import { scrapeCounter } from '../helpers/metrics.js'
import { compareRecords, valuesByPartition } from '../helpers/record-figures.js'
import { poll } from '../helpers/poll.js'
import { runSqueeze, startSqueeze } from '../helpers/squeeze-cli.js'

const SCHEMA = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../schema/compare-report.schema.json', import.meta.url)), 'utf8')
) as object

let kafka: TestKafkaCluster
before(async () => {
  kafka = await startTestKafkaCluster()
})
after(async () => {
  await kafka?.stop()
})

/**
 * Partition → leader node id, as the cluster says now. Retried: a node that has not yet applied the metadata of a
 * topic created a moment ago answers UNKNOWN_TOPIC_OR_PARTITION.
 */
async function leaders(topic: string): Promise<Map<number, number>> {
  return retry(
    async () => {
      const { topics } = await kafka.admin.fetchTopicMetadata({ topics: [topic] })
      const partitions = topics[0]?.partitions ?? []
      if (partitions.length === 0 || partitions.some((p) => p.leader < 0))
        throw new Error(`${topic} has no leaders yet`)
      return new Map(partitions.map((p) => [p.partitionId, p.leader]))
    },
    { deadlineMs: 60_000, initialDelayMs: 100, maxDelayMs: 1000, shouldRetry: () => true }
  )
}

/** The node that is the transaction coordinator of `transactionalId` now (leader of its __transaction_state partition). */
async function transactionCoordinator(transactionalId: string): Promise<number> {
  const cluster = createCluster(kafka.connection, kafka.log)
  await cluster.connect()
  try {
    return (
      await retry(
        () =>
          cluster.findGroupCoordinator({ groupId: transactionalId, coordinatorType: COORDINATOR_TYPES.TRANSACTION }),
        { deadlineMs: 60_000, initialDelayMs: 200, maxDelayMs: 1000, shouldRetry: () => true }
      )
    ).nodeId
  } finally {
    await cluster.disconnect()
  }
}

/**
 * Waits until the cluster is whole again: every node's JVM runs and is a registered, unfenced broker, and every
 * partition of every topic (Kafka's own included) has a leader and all three replicas in sync.
 */
async function waitForHealthyCluster(): Promise<void> {
  const problems = async (): Promise<string[]> => {
    const down = kafka.cluster.nodes.filter((n) => n.pid() === undefined).map((n) => `node ${n.nodeId} not running`)
    const { brokers } = await kafka.admin.describeCluster()
    const unregistered = kafka.cluster.nodes
      .filter((n) => !brokers.some((b) => b.nodeId === n.nodeId))
      .map((n) => `node ${n.nodeId} not a live broker`)
    const { topics } = await kafka.admin.fetchTopicMetadata()
    const lagging = topics.flatMap((t) =>
      t.partitions
        .filter((p) => p.isr.length < 3 || p.leader < 0)
        .map((p) => `${t.name}-${p.partitionId} isr [${p.isr.join(',')}]`)
    )
    return [...down, ...unregistered, ...lagging]
  }
  // A metadata request to a node that is still starting fails: not healthy yet.
  await poll(
    'every node up and every replica in sync',
    () => problems().catch((err: unknown) => [errorMessage(err)]),
    (found) => found.length === 0,
    180_000
  )
}

/** Counts the producer's retries by Kafka error code (or squeeze code for a failed request). */
function retryCounter(): { metrics: ProducerMetrics; codes: Map<string, number> } {
  const codes = new Map<string, number>()
  return {
    codes,
    metrics: {
      batchSent: () => undefined,
      adaptiveBatch: () => undefined,
      levelChanged: () => undefined,
      recordsFailed: () => undefined,
      bufferedBytes: () => undefined,
      retried: (_labels, code) => codes.set(code, (codes.get(code) ?? 0) + 1)
    }
  }
}

/**
 * squeeze's idempotent producer writes `total` records over three partitions, one led by each node; once a third
 * are acknowledged, `fault` hits the node leading partition 0 while batches are in flight. Then everything is
 * read back. The node is brought back (resume) before the test ends.
 */
async function produceThroughFault(
  t: { after(fn: () => Promise<void>): void },
  fault: (node: EmbeddedBroker) => Promise<void>
) {
  const total = 6_000
  const topic = await kafka.createTopic(undefined, { partitions: 3 })
  t.after(async () => {
    await kafka.admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
  })
  const before = await leaders(topic)
  assert.deepEqual([...before.values()].sort(), [1, 2, 3], 'each node leads one partition')
  const victim = kafka.cluster.node(before.get(0) as number)
  const { metrics, codes } = retryCounter()
  const cluster = createCluster(kafka.connection, kafka.log)
  // A small buffer.memory keeps intake at the pace of the acks, so the fault lands with batches in flight.
  const producer = new Producer(
    {
      ...DEFAULT_PRODUCER_CONFIG,
      lingerMs: 5,
      batchSizeBytes: 4 * 1024,
      bufferMemoryBytes: 64 * 1024,
      codec: parseCodecSpec('lz4:1')
    },
    { cluster, log: kafka.log, metrics }
  )
  await producer.start()
  const expected = new Map<number, string[]>([
    [0, []],
    [1, []],
    [2, []]
  ])
  let ackedAtFault = -1
  let restarted: Promise<void> | undefined
  let leaderAfter: number | undefined
  try {
    for (let i = 0; i < total; i++) {
      const partition = i % 3
      const value = `p${partition}-${String(i).padStart(6, '0')}-${'x'.repeat(60)}`
      expected.get(partition)?.push(value)
      const accepted = producer.send({
        topic,
        partition,
        key: null,
        value: Buffer.from(value),
        timestamp: RECENT_MS + i
      })
      await accepted
      // A quick cluster can take the whole intake before it acknowledges a third (lz4 packs these records far
      // below buffer.memory): intake waits at half, so the fault lands mid-produce with records still to send.
      if (ackedAtFault < 0 && (producer.snapshot().recordsAcked >= total / 3 || i + 1 >= total / 2)) {
        ackedAtFault = await poll(
          'a third of the records acknowledged',
          async () => producer.snapshot().recordsAcked,
          (acked) => acked >= total / 3,
          120_000
        )
        await fault(victim)
        restarted = victim.resume()
      }
    }
    await producer.flush()
    // Asked before the node is back: partition 0 was written to its new leader.
    leaderAfter = (await leaders(topic)).get(0)
  } finally {
    await producer.close()
    await restarted
  }
  const stats = producer.snapshot()
  await waitForHealthyCluster()
  const figures = compareRecords(expected, await valuesByPartition(kafka, topic))
  return { figures, ackedAtFault, total, stats, codes, victim: victim.nodeId, leaderAfter }
}

describe('three-node cluster', () => {
  // A case that failed half-way may have left a node down: bring it back, so one failure does not fail the rest.
  beforeEach(async () => {
    for (const node of kafka.cluster.nodes) await node.resume()
    await waitForHealthyCluster()
  })

  it(
    'has a quorum of 3 voters and topics replicated 3 times, all in sync, min.insync.replicas=2',
    { timeout: 150_000 },
    async (t) => {
      const quorum = await runKafkaJavaTool(
        KafkaMainClasses.METADATA_QUORUM,
        ['--bootstrap-server', kafka.cluster.brokers.join(','), 'describe', '--status'],
        { timeoutMs: 100_000 }
      )
      assert.equal(quorum.code, 0, quorum.stderr)
      const voters = /CurrentVoters:\s*(\[.*\])/.exec(quorum.stdout)?.[1]
      assert.ok(voters !== undefined, quorum.stdout)
      assert.deepEqual((JSON.parse(voters) as Array<{ id: number }>).map((v) => v.id).sort(), [1, 2, 3])
      assert.match(quorum.stdout, /LeaderId:\s*[123]\b/)

      const topic = await kafka.createTopic(t, { partitions: 3 })
      // A new topic reaches each node's metadata a moment after it is created: the node asked may not have it yet
      // (UNKNOWN_TOPIC_OR_PARTITION, retriable), or not all of its partitions.
      const partitions = await poll(
        'all 3 partitions of the new topic in the metadata',
        async () => {
          try {
            return (await kafka.admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? []
          } catch (err) {
            if ((err as { retriable?: unknown }).retriable === true) return []
            throw err
          }
        },
        (found) => found.length === 3,
        30_000
      )
      for (const p of partitions) {
        assert.deepEqual([...p.replicas].sort(), [1, 2, 3], `partition ${p.partitionId} replicas`)
        assert.deepEqual([...p.isr].sort(), [1, 2, 3], `partition ${p.partitionId} in-sync replicas`)
      }
      // Kafka spreads the leaders of a new topic over the nodes: each node leads one of the three partitions.
      assert.deepEqual(partitions.map((p) => p.leader).sort(), [1, 2, 3])
      const configs = await kafka.admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['min.insync.replicas'] }]
      })
      assert.equal(
        configs.resources[0]?.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue,
        '2'
      )
    }
  )

  it(
    "compare: stored bytes per replica and across all replicas, labelled, equal to Kafka's LogDirsCommand summed over the brokers",
    { timeout: 300_000 },
    async (t) => {
      const source = await kafka.createTopic(t, { partitions: 3 })
      const filler = await kafka.startProducer({ codec: parseCodecSpec('none'), lingerMs: 5 })
      await filler.sendMany(
        Array.from({ length: 6000 }, (_, i) => ({
          topic: source,
          key: null,
          value: Buffer.from(`GET /item/${i % 97} HTTP/1.1 200 ${(i * 31) % 5000}`),
          timestamp: RECENT_MS + i
        }))
      )
      await filler.flush()
      const targets = ['none', 'zstd:3']
      const destinations = targets.map((spec) => defaultDestination(source, parseCodecSpec(spec)))
      t.after(async () => {
        await kafka.admin.deleteTopics({ topics: destinations }).catch(() => undefined)
      })
      const dir = mkdtempSync(join(tmpdir(), 'squeeze-cluster-compare-'))
      const run = await runSqueeze([
        'compare',
        '--brokers',
        kafka.cluster.brokers.join(','),
        '--topic',
        source,
        '--targets',
        targets.join(','),
        '--keep-topics',
        '--json',
        join(dir, 'r.json'),
        '--markdown',
        join(dir, 'r.md'),
        '--log-level',
        'error',
        // Every column: the terminal-width table leaves the all-replicas column out.
        '--wide'
      ])
      assert.equal(run.code, 0, run.stderr)
      const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as CompareReportJson
      const ajv = new Ajv({ allErrors: true })
      assert.ok(ajv.validate(SCHEMA, report), JSON.stringify(ajv.errors))
      assert.equal(report.settings.replicationFactor, 3)

      // A tool is a JVM of its own: on a loaded two-core machine its start alone has taken over 60 s.
      const logDirs = await runKafkaJavaTool(
        KafkaMainClasses.LOG_DIRS,
        ['--bootstrap-server', kafka.cluster.brokers.join(','), '--describe', '--topic-list', destinations.join(',')],
        { timeoutMs: 150_000 }
      )
      assert.equal(logDirs.code, 0, logDirs.stderr)
      const json = logDirs.stdout
        .trim()
        .split('\n')
        .reverse()
        .find((line) => line.startsWith('{'))
      assert.ok(json !== undefined, logDirs.stdout)
      const described = JSON.parse(json) as {
        brokers: Array<{ broker: number; logDirs: Array<{ partitions: Array<{ partition: string; size: number }> }> }>
      }
      assert.deepEqual(described.brokers.map((b) => b.broker).sort(), [1, 2, 3])
      for (const target of report.targets) {
        // Kafka names a replica `<topic>-<partition>`; per partition, every broker's replica size.
        const sizes = new Map<string, number[]>()
        for (const broker of described.brokers) {
          for (const p of broker.logDirs.flatMap((d) => d.partitions)) {
            if (p.partition.slice(0, p.partition.lastIndexOf('-')) !== target.topic) continue
            sizes.set(p.partition, [...(sizes.get(p.partition) ?? []), p.size])
          }
        }
        assert.equal(sizes.size, 3, `${target.topic}: three partitions`)
        for (const [partition, replicas] of sizes)
          assert.equal(replicas.length, 3, `${partition}: a replica on each broker`)
        const allReplicas = [...sizes.values()].flat().reduce((a, b) => a + b, 0)
        const perReplica = [...sizes.values()].reduce((sum, replicas) => sum + Math.max(...replicas), 0)
        console.log(
          `compare ${target.target}: stored per replica ${target.storedBytes} (LogDirsCommand ${perReplica}), all replicas ${target.storedBytesAllReplicas} (LogDirsCommand ${allReplicas})`
        )
        assert.equal(target.storedBytes, perReplica, `${target.target}: stored bytes per replica`)
        assert.equal(target.storedBytesAllReplicas, allReplicas, `${target.target}: stored bytes across all replicas`)
        // Followers copy the leader's batches byte for byte: three equal replicas.
        assert.equal(target.storedBytesAllReplicas, 3 * target.storedBytes)
      }
      for (const text of [run.stdout, readFileSync(join(dir, 'r.md'), 'utf8')]) {
        assert.match(text, /stored per replica/)
        assert.match(text, /stored all replicas/)
      }
    }
  )

  // The group's coordinator and the partitions' leaders are spread over the three nodes: members talk to several.
  it(
    'consume --group: a group scales 1 -> 3 on 6 partitions counting each record once; one member SIGKILLed, one added: every record counted, commits never backwards, one owner per partition',
    { timeout: 300_000 },
    (t) => scaleKillAndAdd(kafka, t)
  )

  for (const fault of ['SIGKILL', 'clean shutdown'] as const) {
    it(
      `producer: the leader of a partition ${fault === 'SIGKILL' ? 'SIGKILLed' : 'shut down cleanly'} mid-produce, then restarted: 0 lost, 0 duplicated, order kept`,
      { timeout: 240_000 },
      async (t) => {
        const run = await produceThroughFault(t, (node) => (fault === 'SIGKILL' ? node.kill() : node.halt()))
        console.log(
          `producer, ${fault} of node ${run.victim}: ${JSON.stringify({ ...run.figures, ackedAtFault: run.ackedAtFault, retries: Object.fromEntries(run.codes), leaderAfter: run.leaderAfter })}`
        )
        assert.ok(
          run.ackedAtFault > 0 && run.ackedAtFault < run.total,
          `the fault landed mid-produce: ${run.ackedAtFault} of ${run.total} acknowledged`
        )
        assert.ok(run.stats.retries > 0, 'the producer met the fault (it retried)')
        assert.equal(run.stats.recordsFailed, 0)
        assert.equal(run.stats.recordsAcked, run.total)
        assert.notEqual(run.leaderAfter, run.victim, 'leadership of partition 0 moved off the node')
        assert.equal(run.figures.lost, 0, 'records lost')
        assert.equal(run.figures.duplicated, 0, 'records duplicated')
        assert.equal(run.figures.outOfOrder, 0, 'records out of order')
        assert.equal(run.figures.received, run.total)
      }
    )
  }

  it(
    "copier --exactly-once: the transaction coordinator's node SIGKILLed mid-copy, then restarted: every source record exactly once (read_committed)",
    { timeout: 240_000 },
    async (t) => {
      const total = 60_000
      const source = await kafka.createTopic(t, { partitions: 3 })
      const destination = defaultDestination(source, parseCodecSpec('zstd:1'))
      t.after(async () => {
        await kafka.admin.deleteTopics({ topics: [destination] }).catch(() => undefined)
      })
      const filler = await kafka.startProducer({ codec: parseCodecSpec('lz4:1'), lingerMs: 5 })
      await filler.sendMany(
        Array.from({ length: total }, (_, i) => ({
          topic: source,
          partition: i % 3,
          key: Buffer.from(`k${i % 7}`),
          value: Buffer.from(`record-${String(i).padStart(6, '0')}`),
          timestamp: RECENT_MS + i
        }))
      )
      await filler.flush()
      const transactionalId = `eos-${source}`
      const copy = await startSqueeze([
        'copy',
        '--brokers',
        kafka.cluster.brokers.join(','),
        '--topic',
        source,
        '--targets',
        'zstd:1',
        '--until-end',
        '--exactly-once',
        '--transactional-id',
        transactionalId,
        '--commit-interval-ms',
        '200',
        '-X',
        'linger.ms=5',
        '-X',
        'batch.size=4096',
        '--log-level',
        'warn'
      ])
      let exited = false
      void copy.exited.then(() => (exited = true))
      let copiedAtKill = 0
      let victim: EmbeddedBroker | undefined
      while (!exited && victim === undefined) {
        const copied = await scrapeCounter(copy.metricsPort, 'squeeze_copier_source_records_total')
        if (copied !== null && copied > 0 && copied < total) {
          // The copier, own fetches and one sendMany per slice, copies these records in a fraction of a second: it
          // is paused while its coordinator's node dies, so the kill lands mid-copy however fast it goes.
          copy.kill('SIGSTOP')
          copiedAtKill = copied
          // Asked at the moment of the kill: the coordinator may have moved since the copier started.
          victim = kafka.cluster.node(await transactionCoordinator(transactionalId))
          await victim.kill()
          copy.kill('SIGCONT')
        } else {
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      }
      const restarted = victim?.resume()
      const code = await copy.exited
      await restarted
      assert.ok(victim !== undefined, 'the copy ended before any record was seen copied: no kill')
      assert.equal(
        code,
        0,
        `copier failed: ${copy
          .stderr()
          .split('\n')
          .filter((l) => !l.includes('"kafkajs"'))
          .join('\n')
          .slice(-3000)}`
      )
      const newCoordinator = await transactionCoordinator(transactionalId)
      await waitForHealthyCluster()
      const expected = await valuesByPartition(kafka, source)
      const figures = compareRecords(expected, await valuesByPartition(kafka, destination))
      console.log(
        `copier --exactly-once, SIGKILL of coordinator node ${victim.nodeId}: ${JSON.stringify({ ...figures, copiedAtKill, coordinatorAfter: newCoordinator })}`
      )
      assert.ok(
        copiedAtKill > 0 && copiedAtKill < total,
        `the kill landed mid-copy: ${copiedAtKill} of ${total} copied`
      )
      assert.equal(figures.lost, 0, 'records lost')
      assert.equal(figures.duplicated, 0, 'records duplicated (read_committed)')
      assert.equal(figures.outOfOrder, 0, 'records out of order')
      assert.deepEqual(
        await valuesByPartition(kafka, destination),
        expected,
        'same records, same partitions, same order'
      )
    }
  )
})
