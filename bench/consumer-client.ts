import { parseArgs } from 'node:util'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../lib/consumer/partition-reader.js'
import { TopicMeasurements } from '../lib/consumer/measure-topics.js'
import { formatFor } from '../lib/formats/index.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createLogger } from '../lib/log/logger.js'

/**
 * squeeze's consumer in its own process (the same reader and measurements as `squeeze consume`):
 *   node dist/bench/consumer-client.js --brokers B --topic T --format none|http
 * The clock starts after connecting; prints one JSON line with records, seconds, cpuSeconds, and the
 * consumer's own split of CPU into decompression and decoding.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { brokers: { type: 'string' }, topic: { type: 'string' }, format: { type: 'string' } } })
  const topic = values.topic ?? ''
  const log = createLogger({ level: 'warn', name: 'bench-consumer' })
  const connection = { ...DEFAULT_CONNECTION, brokers: (values.brokers ?? '').split(',') }
  const cluster = createCluster(connection, log)
  const admin = createKafkaClient(connection, log).admin()
  await Promise.all([cluster.connect(), admin.connect()])
  const format = values.format === 'http' ? formatFor('http') : null
  const measurements = new TopicMeasurements(() => format, log)
  const reader = new PartitionReader({ ...DEFAULT_READER_CONFIG, topics: [topic], reuseBatchMemory: true }, { cluster, admin, log })
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await reader.run(measurements)
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  const cpu = process.cpuUsage(cpu0)
  const m = measurements.get(topic)
  await Promise.allSettled([cluster.disconnect(), admin.disconnect()])
  process.stdout.write(`${JSON.stringify({
    records: m.records, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, uncompressedBytes: m.uncompressedBytes,
    decompressCpuSeconds: m.decompressCpuSeconds, decodeCpuSeconds: m.decodeCpuSeconds, corruptRecords: m.corruptRecords
  })}\n`)
}

await main()
