import { parseArgs } from 'node:util'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../lib/consumer/partition-reader.js'
import { TopicMeasurements } from '../lib/consumer/measure-topics.js'
import { formatFor } from '../lib/formats/index.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createLogger } from '../lib/log/logger.js'

/**
 * squeeze's consumer in its own process (the same reader and measurements as `squeeze consume`):
 *   node dist/bench/consumer-client.js --brokers B --topic T --format none|http [--passes N]
 * Reads the topic N times in one process (a fresh reader each time) and reports the last read: the steady rate,
 * as kcat's (timed from its first record to its last) is; the first read also pays for V8 compiling the read path.
 * Each read's clock starts once connected. Prints one JSON line with records, seconds (last read), passSeconds,
 * cpuSeconds (all reads), and the last read's split of CPU into decompression and decoding.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      brokers: { type: 'string' },
      topic: { type: 'string' },
      format: { type: 'string' },
      passes: { type: 'string' }
    }
  })
  const passes = Math.max(1, Number(values.passes ?? 1))
  const topic = values.topic ?? ''
  const log = createLogger({ level: 'warn', name: 'bench-consumer' })
  const connection = { ...DEFAULT_CONNECTION, brokers: (values.brokers ?? '').split(',') }
  const cluster = createCluster(connection, log)
  const admin = createKafkaClient(connection, log).admin()
  await Promise.all([cluster.connect(), admin.connect()])
  const format = values.format === 'http' ? formatFor('http') : null
  const cpu0 = process.cpuUsage()
  const passSeconds: number[] = []
  let measurements = new TopicMeasurements(() => format, log)
  for (let p = 0; p < passes; p++) {
    measurements = new TopicMeasurements(() => format, log)
    const reader = new PartitionReader(
      { ...DEFAULT_READER_CONFIG, topics: [topic], reuseBatchMemory: true },
      { cluster, admin, log }
    )
    const t0 = process.hrtime.bigint()
    await reader.run(measurements)
    passSeconds.push(Number(process.hrtime.bigint() - t0) / 1e9)
  }
  const seconds = passSeconds[passSeconds.length - 1] ?? NaN
  const cpu = process.cpuUsage(cpu0)
  const m = measurements.get(topic)
  await Promise.allSettled([cluster.disconnect(), admin.disconnect()])
  process.stdout.write(
    `${JSON.stringify({
      records: m.records,
      seconds,
      passSeconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      uncompressedBytes: m.uncompressedBytes,
      decompressCpuSeconds: m.decompressCpuSeconds,
      decodeCpuSeconds: m.decodeCpuSeconds,
      corruptRecords: m.corruptRecords
    })}\n`
  )
}

await main()
