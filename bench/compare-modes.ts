// compare, copy vs projection: the same source topic and targets through both modes on one embedded broker.
// Usage: node dist/bench/compare-modes.js [MiB of source, default 64]. Prints a table and writes
// bench-compare-modes.json. Node CPU is this process's (every thread); the broker's JVM is not counted.
import { writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { installKafkajsDecoders } from '../lib/codecs/kafkajs-plugin.js'
import { runProjection } from '../lib/compare/projection/run-projection.js'
import { runCompare } from '../lib/compare/run-compare.js'
import { COPIER_PRODUCER_DEFAULTS } from '../lib/copier/copier.js'
import { DEFAULT_TARGETS, parseTargets } from '../lib/copier/targets.js'
import { killEmbeddedBrokersOnExit, startKraftBroker } from '../lib/embedded-broker/kraft-broker.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createTopicsAndWait } from '../lib/kafka/topics.js'
import { createLogger } from '../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../lib/producer/producer.js'
import { generateRecords } from '../lib/sources/generator-source.js'

const mib = Number(process.argv[2] ?? 64)
const log = createLogger({ level: 'warn', name: 'bench-compare-modes' })
installKafkajsDecoders()
killEmbeddedBrokersOnExit()
const broker = await startKraftBroker({ heapMb: 1024 })
try {
  const connection = { ...DEFAULT_CONNECTION, brokers: [broker.bootstrap], clientId: 'bench' }
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  const topic = `bench-modes-${Date.now()}`
  await createTopicsAndWait(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }])
  const producer = new Producer({ ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'lz4', level: 1 } }, { cluster: createCluster(connection, log), log })
  await producer.start()
  let bytes = 0
  for await (const item of generateRecords({ kind: 'http', seed: 7 })) {
    if (item.kind !== 'record') continue
    await producer.send({ topic, key: item.key, value: item.value })
    bytes += item.value?.length ?? 0
    if (bytes >= mib * 1024 * 1024) break
  }
  await producer.close()
  const targets = parseTargets(DEFAULT_TARGETS.join(','), topic)
  const common = { connection, sourceTopic: topic, sourceDescription: { kind: 'topic' as const, description: topic }, targets, format: null, rateEvidence: { kind: 'topic' as const, lookbackMs: 3_600_000 }, consumers: 1, version: 'bench', log }
  const measure = async <T>(run: () => Promise<T>): Promise<{ result: T; seconds: number; cpuSeconds: number }> => {
    const cpu = process.cpuUsage()
    const start = performance.now()
    const result = await run()
    const used = process.cpuUsage(cpu)
    return { result, seconds: (performance.now() - start) / 1000, cpuSeconds: (used.user + used.system) / 1e6 }
  }
  const copy = await measure(() => runCompare({ ...common, producer: { ...DEFAULT_PRODUCER_CONFIG, ...COPIER_PRODUCER_DEFAULTS }, keepTopics: false }))
  const threads = availableParallelism()
  const projection = await measure(() => runProjection({ ...common, batching: DEFAULT_PRODUCER_CONFIG, threads }))
  // The codec ceiling for this target set: every target's compress CPU, spread over the cores, is the least wall time.
  const compressCpu = projection.result.report.targets.reduce((n, t) => n + t.compressCpuSeconds, 0)
  const bound = compressCpu / threads
  const rows = {
    sourceMiB: bytes / 1024 / 1024, records: projection.result.report.source.records, targets: targets.length, cores: threads,
    copy: { seconds: copy.seconds, nodeCpuSeconds: copy.cpuSeconds },
    projection: { seconds: projection.seconds, nodeCpuSeconds: projection.cpuSeconds, compressCpuSeconds: compressCpu, codecCeilingSeconds: bound, fractionOfCeiling: bound / projection.seconds },
    speedup: copy.seconds / projection.seconds,
    storedBytes: Object.fromEntries(copy.result.report.targets.map((t) => [t.target, { copy: t.storedBytes, projection: projection.result.report.targets.find((p) => p.target === t.target)?.storedBytes ?? 0 }]))
  }
  process.stdout.write(`source ${rows.sourceMiB.toFixed(1)} MiB (${rows.records} records), ${rows.targets} targets, ${threads} cores\n` +
    `copy:       ${copy.seconds.toFixed(1)} s wall, ${copy.cpuSeconds.toFixed(1)} s node CPU\n` +
    `projection: ${projection.seconds.toFixed(1)} s wall, ${projection.cpuSeconds.toFixed(1)} s node CPU; codec ceiling ${bound.toFixed(1)} s (${(rows.projection.fractionOfCeiling * 100).toFixed(0)}%)\n` +
    `projection is ${rows.speedup.toFixed(1)}x faster\n`)
  writeFileSync('bench-compare-modes.json', `${JSON.stringify(rows, null, 2)}\n`)
  await admin.disconnect()
} finally {
  await broker.stop()
}
