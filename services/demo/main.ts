import { pathToFileURL } from 'node:url'
import { formatCodecSpec, parseCodecSpec } from '../../lib/codecs/index.js'
import { COMMON_OPTIONS, parseCli, parseInteger, serviceOptionsFrom } from '../../lib/config/cli.js'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../lib/consumer/partition-reader.js'
import { TopicMeasurements } from '../../lib/consumer/measure-topics.js'
import { acquireBroker } from '../../lib/embedded-broker/select-broker.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import { describeLogDirs } from '../../lib/kafka/describe-log-dirs.js'
import { ensureTopic } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { renderCodecReport, type CodecRun } from '../../lib/report/codec-report.js'
import { installShutdown, runCommand } from '../../lib/service/lifecycle.js'
import { generateRecords } from '../../lib/sources/generator-source.js'
import { oneOf } from '../../lib/config/cli.js'

export const DEMO_CODECS = ['none', 'gzip:6', 'snappy', 'lz4:1', 'lz4:9', 'zstd:1', 'zstd:3', 'zstd:9'] as const

export const DEMO_HELP = `squeeze demo: start a Kafka broker (KAFKA_BROKERS, else testcontainers, else an embedded JVM broker),
produce the same generated logs once per codec, read every topic back, and print the size/CPU table.

Usage: squeeze demo [--records N] [--kind KIND] [--codecs LIST] [--partitions N]
  --records N        records per codec (default 30000)
  --kind KIND        ${LOG_KINDS.join(', ')} (default http: Cap'n Proto HTTP request logs)
  --codecs LIST      comma-separated codec[:level] list (default ${DEMO_CODECS.join(',')})
  --partitions N     partitions per topic (default 3)
  --log-level LEVEL  (default warn)`

const OPTIONS = { ...COMMON_OPTIONS, records: { type: 'string' }, kind: { type: 'string' }, codecs: { type: 'string' }, partitions: { type: 'string' } } as const

export async function demoMain(argv: readonly string[]): Promise<number> {
  const { values } = parseCli(argv, OPTIONS)
  if (values.help === true) {
    process.stdout.write(`${DEMO_HELP}\n`)
    return 0
  }
  const records = parseInteger(values.records, 'records', 1) ?? 30_000
  const partitions = parseInteger(values.partitions, 'partitions', 1, 64) ?? 3
  const kind = oneOf(values.kind, 'kind', LOG_KINDS, 'http' as LogKind)
  const specs = (values.codecs ?? DEMO_CODECS.join(',')).split(',').map(parseCodecSpec)
  const service = serviceOptionsFrom({ ...values, 'log-level': values['log-level'] ?? 'warn' })
  const log = createLogger({ level: service.logLevel, name: 'squeeze-demo' })
  const signal = installShutdown(log, { timeoutMs: 30_000 })

  process.stderr.write('starting Kafka...\n')
  const broker = await acquireBroker((msg: string) => log.info(msg))
  process.stderr.write(`Kafka (${broker.kind}) at ${broker.brokers.join(',')}\n`)
  const connection = { ...DEFAULT_CONNECTION, brokers: broker.brokers, clientId: 'squeeze-demo' }
  const admin = createKafkaClient(connection, log).admin()
  const runs: CodecRun[] = []
  const topics: string[] = []
  try {
    await admin.connect()
    for (const spec of specs) {
      if (signal.aborted) break
      const label = formatCodecSpec(spec)
      const topic = `squeeze-demo.${kind}.${label.replace(':', '-')}.${Date.now()}`
      topics.push(topic)
      await ensureTopic(admin, topic, partitions)
      const producer = new Producer({ ...DEFAULT_PRODUCER_CONFIG, codec: spec }, { cluster: createCluster(connection, log), log })
      await producer.start()
      // Same seed for every codec: each one compresses identical records.
      for await (const item of generateRecords({ kind, seed: 42, records, signal })) {
        if (item.kind === 'record') await producer.send({ topic, key: item.key, value: item.value, timestamp: item.timestampMs })
      }
      await producer.close()
      process.stderr.write(`produced ${producer.snapshot().recordsAcked} records with ${label}\n`)

      const cluster = createCluster(connection, log)
      await cluster.connect()
      const measurements = new TopicMeasurements(() => formatFor(kind), log)
      await new PartitionReader({ ...DEFAULT_READER_CONFIG, topics: [topic] }, { cluster, admin, log }).run(measurements, signal)
      const consumer = measurements.get(topic)
      consumer.diskBytes = (await describeLogDirs(cluster, [topic])).reduce((sum, s) => sum + s.sizeBytes, 0)
      await cluster.disconnect()
      runs.push({ label, producer: producer.snapshot(), consumer })
    }
    process.stdout.write(`\n${records} generated ${kind} records per codec, ${partitions} partitions, linger.ms=${DEFAULT_PRODUCER_CONFIG.lingerMs}, batch.size=${DEFAULT_PRODUCER_CONFIG.batchSizeBytes}\n`)
    process.stdout.write(`stored = bytes on the broker's disk (DescribeLogDirs); CPU is process CPU time measured around each codec call\n\n`)
    process.stdout.write(`${renderCodecReport(runs)}\n`)
    return runs.some((r) => r.producer.recordsFailed > 0 || r.consumer.records !== r.producer.recordsAcked) ? 1 : 0
  } finally {
    await admin.deleteTopics({ topics }).catch(() => undefined)
    await admin.disconnect().catch(() => undefined)
    await broker.stop()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCommand(() => demoMain(process.argv.slice(2)))
