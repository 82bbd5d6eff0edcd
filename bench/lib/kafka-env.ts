import type { Admin } from 'kafkajs'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../lib/consumer/partition-reader.js'
import { isTransient } from '../../lib/errors.js'
import { retry } from '../../lib/retry.js'
import {
  acquireBroker,
  killEmbeddedBrokersOnExit,
  type AcquiredBroker
} from '../../lib/embedded-broker/select-broker.js'
import { javaBinary, javaClasspath, kafkaLog4jConfig } from '../../lib/embedded-broker/kafka-jars.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import { describeLogDirs } from '../../lib/kafka/describe-log-dirs.js'
import type { KafkajsCluster } from '../../lib/kafka/kafkajs-internals.js'
import { ensureTopic } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runChild, writeJson, type ChildOptions, type ChildRun } from './harness.js'
import { processCpuSeconds } from './proc-usage.js'

/** One broker for the whole run, with the admin work every section needs (topics, stored bytes, batch shape). */
export interface BenchKafka {
  readonly brokers: string
  readonly kind: string
  /** The broker's process, when this run started it (the embedded JVM): its CPU is read from /proc. */
  readonly pid: number | undefined
  /** The broker's CPU seconds so far (user+system, all its threads); NaN without `pid`. */
  brokerCpuSeconds(): number
  createTopic(name: string, partitions: number): Promise<string>
  /** Bytes of the topic's log on the broker's disk (DescribeLogDirs), all partitions. */
  storedBytes(topic: string): Promise<number>
  /** Records in the topic: the sum of its partitions' high minus low watermarks. */
  recordCount(topic: string): Promise<number>
  /** Batches as stored: count, records and uncompressed bytes (read back with squeeze's reader, untimed). */
  batchShape(topic: string): Promise<{ batches: number; records: number; uncompressedBytes: number }>
  /**
   * Each stored batch's records section as decompressed (a copy), with its record count: the very batches a
   * producer sealed, to compress again apart from it. Control batches and batches without a whole section are left out.
   */
  recordSections(topic: string): Promise<Array<{ records: Buffer; count: number }>>
  deleteCreatedTopics(): Promise<void>
  close(): Promise<void>
}

export const PARTITIONS = Number(process.env['BENCH_PARTITIONS'] ?? 3)

export async function openBenchKafka(): Promise<BenchKafka> {
  killEmbeddedBrokersOnExit()
  const broker: AcquiredBroker = await acquireBroker((m) => process.stderr.write(`${m}\n`))
  const brokers = broker.brokers
  const log = createLogger({ level: 'warn', name: 'bench' })
  const connection = { ...DEFAULT_CONNECTION, brokers }
  const admin: Admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  // A fresh cluster per question: a long-lived one keeps asking metadata for topics deleted since.
  const withCluster = async <T>(work: (cluster: KafkajsCluster) => Promise<T>): Promise<T> => {
    const cluster = createCluster(connection, log)
    await cluster.connect()
    try {
      return await work(cluster)
    } finally {
      await cluster.disconnect().catch(() => undefined)
    }
  }
  const created: string[] = []
  return {
    brokers: brokers.join(','),
    kind: broker.kind,
    get pid() {
      return broker.embedded?.pid()
    },
    brokerCpuSeconds() {
      const pid = broker.embedded?.pid()
      return pid === undefined ? NaN : processCpuSeconds(pid)
    },
    async createTopic(name, partitions) {
      await ensureTopic(admin, name, partitions)
      created.push(name)
      return name
    },
    storedBytes: (topic) =>
      withCluster(async (cluster) => {
        await cluster.addMultipleTargetTopics([topic])
        const sizes = await describeLogDirs(cluster, [topic])
        return sizes.reduce((sum, s) => sum + s.sizeBytes, 0)
      }),
    async recordCount(topic) {
      // A topic created a moment ago may answer NOT_LEADER until its leader is known everywhere.
      const offsets = await retry(() => admin.fetchTopicOffsets(topic), {
        retries: 10,
        initialDelayMs: 50,
        maxDelayMs: 500,
        shouldRetry: isTransient
      })
      return offsets.reduce((sum, o) => sum + Number(o.high) - Number(o.low), 0)
    },
    batchShape: (topic) =>
      withCluster(async (cluster) => {
        const shape = { batches: 0, records: 0, uncompressedBytes: 0 }
        const reader = new PartitionReader(
          { ...DEFAULT_READER_CONFIG, topics: [topic], verifyCrc: false },
          { cluster, admin, log }
        )
        await reader.run({
          onBatch: ({ batch }) => {
            if (batch.isControl) return
            shape.batches++
            shape.records += batch.recordCount
            shape.uncompressedBytes += batch.uncompressedBytes
          },
          onCorruptBatch: () => {}
        })
        return shape
      }),
    recordSections: (topic) =>
      withCluster(async (cluster) => {
        const sections: Array<{ records: Buffer; count: number }> = []
        const reader = new PartitionReader(
          { ...DEFAULT_READER_CONFIG, topics: [topic], verifyCrc: false },
          { cluster, admin, log }
        )
        await reader.run({
          onBatch: ({ batch }) => {
            // Copied: the reader decompresses every batch into one reused buffer.
            if (!batch.isControl && batch.whole !== null)
              sections.push({ records: Buffer.from(batch.whole.records), count: batch.whole.count })
          },
          onCorruptBatch: () => {}
        })
        return sections
      }),
    async deleteCreatedTopics() {
      if (created.length === 0) return
      await admin.deleteTopics({ topics: created.splice(0) }).catch(() => undefined)
    },
    async close() {
      await admin.disconnect().catch(() => undefined)
      await broker.stop()
    }
  }
}

/** JVM options for the Java peers: server-class JIT (C2) and G1, as kafka-run-class.sh runs the tools. */
export function javaPeerOptions(): string[] {
  return [
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${kafkaLog4jConfig()}`
  ]
}

export function runJava(mainClass: string, args: readonly string[], opts: ChildOptions = {}): Promise<ChildRun> {
  return runChild(javaBinary(), [...javaPeerOptions(), '-cp', javaClasspath(), mainClass, ...args], opts)
}

/** A section's progress line on stderr, with the time. */
export function benchLog(s: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`)
}

/**
 * A section run on its own (`node dist/bench/NAME.js [out.json]`): a broker and a temp folder for it, its table
 * under its title on stdout, its result as JSON (`bench-NAME.json` unless named), everything cleaned up after.
 */
export async function runSectionAlone<T>(
  name: string,
  bench: (kafka: BenchKafka, dir: string, log: (s: string) => void) => Promise<T>,
  render: (result: T) => { title: string; table: string }
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `squeeze-bench-${name}-`))
  const kafka = await openBenchKafka()
  try {
    const result = await bench(kafka, dir, benchLog)
    const { title, table } = render(result)
    process.stdout.write(`\n## ${title}\n\n${table}\n`)
    writeJson(process.argv[2] ?? `bench-${name}.json`, result)
  } finally {
    await kafka.deleteCreatedTopics().catch(() => undefined)
    await kafka.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
