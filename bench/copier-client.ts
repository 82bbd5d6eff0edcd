import { parseArgs } from 'node:util'
import { parseCodecSpec } from '../lib/codecs/index.js'
import { installKafkajsDecoders } from '../lib/codecs/kafkajs-plugin.js'
import {
  COPIER_PRODUCER_DEFAULTS,
  COPY_BATCHING,
  Copier,
  defaultDestination,
  type CopyBatching
} from '../lib/copier/copier.js'
import { prepareDestinations } from '../lib/copier/destinations.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createLogger } from '../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../lib/producer/producer.js'
import { processCpuSeconds } from './lib/proc-usage.js'

/**
 * squeeze's copier in its own process, wired as `squeeze copy --until-end` wires it:
 *   node dist/bench/copier-client.js --brokers B --topic SRC --targets none,lz4,zstd:3,... [--batching source|rebatch]
 *     [--compression-threads N] [--broker-pid PID]
 * The clock and the CPU meter start at the first source record (after the copier joined its group) and stop
 * when every target acknowledged the last one; with --broker-pid, the broker's CPU is read over the same span.
 * Prints one JSON line.
 */
/** --compression-threads N: the producer's compression threads (-X squeeze.compression.threads), else the copier's default. */
function threads(value: string | undefined): { compressionThreads?: number } {
  return value === undefined ? {} : { compressionThreads: Number(value) }
}

async function main(): Promise<void> {
  installKafkajsDecoders()
  const { values } = parseArgs({
    options: {
      brokers: { type: 'string' },
      topic: { type: 'string' },
      targets: { type: 'string' },
      group: { type: 'string' },
      prefix: { type: 'string' },
      batching: { type: 'string' },
      'compression-threads': { type: 'string' },
      'broker-pid': { type: 'string' }
    }
  })
  // An older build's client, run as a baseline, has no --batching: it re-batches.
  const batching = (COPY_BATCHING as readonly string[]).includes(values.batching ?? '')
    ? (values.batching as CopyBatching)
    : 'rebatch'
  const source = values.topic ?? ''
  const targets = (values.targets ?? '').split(',').map((t) => {
    const spec = parseCodecSpec(t)
    return { spec, topic: defaultDestination(values.prefix ?? source, spec) }
  })
  const log = createLogger({ level: 'warn', name: 'bench-copier' })
  const connection = { ...DEFAULT_CONNECTION, brokers: (values.brokers ?? '').split(',') }
  const admin = createKafkaClient(connection, log).admin()
  const cluster = createCluster(connection, log)
  const producer = new Producer(
    {
      ...DEFAULT_PRODUCER_CONFIG,
      ...COPIER_PRODUCER_DEFAULTS,
      ...threads(values['compression-threads']),
      topicCodecs: Object.fromEntries(targets.map((t) => [t.topic, t.spec]))
    },
    { cluster: createCluster(connection, log), log }
  )
  await Promise.all([admin.connect(), cluster.connect()])
  await prepareDestinations(admin, source, targets)
  await producer.start()
  let t0: bigint | undefined
  let cpu0: NodeJS.CpuUsage | undefined
  const brokerPid = values['broker-pid'] === undefined ? undefined : Number(values['broker-pid'])
  const brokerCpu = (): number => (brokerPid === undefined ? NaN : processCpuSeconds(brokerPid))
  let brokerCpu0 = NaN
  const copier = new Copier(
    {
      sourceTopic: source,
      groupId: values.group ?? `bench-copier-${Date.now()}`,
      targets,
      exactlyOnce: false,
      commitIntervalMs: 1000,
      stopAtEnd: true,
      batching
    },
    {
      cluster,
      admin,
      producer,
      log,
      onProgress: () => {
        if (t0 !== undefined) return
        t0 = process.hrtime.bigint()
        cpu0 = process.cpuUsage()
        brokerCpu0 = brokerCpu()
      }
    }
  )
  await copier.run()
  await producer.flush()
  const seconds = t0 === undefined ? NaN : Number(process.hrtime.bigint() - t0) / 1e9
  const cpu = process.cpuUsage(cpu0)
  const brokerCpuSeconds = brokerCpu() - brokerCpu0
  await producer.close()
  await Promise.all([admin.disconnect(), cluster.disconnect()])
  const stats = copier.snapshot()
  const produced = producer.snapshot()
  process.stdout.write(
    `${JSON.stringify({
      sourceRecords: stats.sourceRecords,
      sourceBytes: stats.sourceBytes,
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      ...(Number.isNaN(brokerCpuSeconds) ? {} : { brokerCpuSeconds }),
      targets: targets.length,
      producedBytes: produced.uncompressedBytes,
      compressCpuSeconds: produced.compressCpuSeconds,
      decompressCpuSeconds: stats.decompressCpuSeconds,
      recordsFailed: produced.recordsFailed
    })}\n`
  )
}

await main()
