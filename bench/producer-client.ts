import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import { parseArgs } from 'node:util'
import kafkajs from 'kafkajs'
import { createCodec, type CodecSpec } from '../lib/codecs/index.js'
import { toKafkajsCodec, type KafkajsCodec } from '../lib/codecs/kafkajs-plugin.js'
import { createCluster, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createLogger } from '../lib/log/logger.js'
import { threadCpuSeconds } from '../lib/metrics/thread-cpu.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../lib/producer/producer.js'
import { BATCH } from '../lib/protocol/batch-layout.js'
import { readLengthPrefixed } from './lib/inputs.js'
import { loadConfluentKafkaJavascript } from './lib/peers.js'

/**
 * One producer run in its own process, so the parent measures its CPU and peak RSS with GNU time:
 *   node dist/bench/producer-client.js --client squeeze|kafkajs-each|kafkajs-1000|confluent \
 *     --brokers B --topic T --input FILE.lp --codec zstd|lz4 --level N --linger-ms N --batch-size N [--passes N]
 *     [--threads N]   (squeeze's compression threads; default cores - 1)
 * Values are loaded before the clock starts; each pass's clock stops when every record is acknowledged.
 * Prints one JSON line: records (per pass), seconds (last pass), passSeconds, cpuSeconds (this process, all
 * passes), the last pass's process and main-thread CPU, and squeeze's own stats.
 */

export type NodeClient = 'squeeze' | 'kafkajs-each' | 'kafkajs-1000' | 'confluent'

export interface ClientResult {
  readonly client: NodeClient
  readonly records: number
  /** The last pass: records sent, from its first send to its last acknowledgement. */
  readonly seconds: number
  /** Every pass in order; the first includes V8 compiling the send path. */
  readonly passSeconds: readonly number[]
  readonly cpuSeconds: number
  /** The last pass: the process's CPU, and the main thread's alone (the event loop, without compression threads). */
  readonly lastPassCpuSeconds: number
  readonly lastPassMainThreadCpuSeconds: number
  /** The last pass's minor page faults, all threads: fresh memory costs one per 4 KiB page touched. */
  readonly lastPassMinorFaults: number
  /**
   * squeeze only: CPU spent sealing batches and the records bytes they took in (batch headers left out, as the
   * ceiling counts only the records sections the codec compresses).
   */
  readonly compressCpuSeconds?: number
  readonly recordsBytes?: number
  readonly batches?: number
}

interface Args {
  client: NodeClient
  brokers: string
  topic: string
  values: Buffer[]
  spec: CodecSpec
  lingerMs: number
  batchSize: number
  passes: number
  threads: number | undefined
}

async function runSqueeze(a: Args): Promise<Partial<ClientResult>> {
  const log = createLogger({ level: 'warn', name: 'bench-producer' })
  const cluster = createCluster({ ...DEFAULT_CONNECTION, brokers: a.brokers.split(',') }, log)
  const threads = a.threads === undefined ? {} : { compressionThreads: a.threads }
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, lingerMs: a.lingerMs, batchSizeBytes: a.batchSize, codec: a.spec, ...threads },
    { cluster, log }
  )
  await producer.start()
  return timed(
    a.passes,
    async () => {
      // sendMany in slices of 1,000: intake without an await per record, as confluent's produce() and kcat's
      // rd_kafka_produce() are called here (synchronously, per record).
      for (let i = 0; i < a.values.length; i += 1000) {
        await producer.sendMany(a.values.slice(i, i + 1000).map((value) => ({ topic: a.topic, key: null, value })))
      }
      await producer.flush()
    },
    async () => {
      const s = producer.snapshot()
      await producer.close()
      if (s.recordsFailed > 0) throw new Error(`${s.recordsFailed} records failed`)
      const recordsBytes = s.uncompressedBytes - s.batchesAcked * BATCH.HEADER_BYTES
      return { compressCpuSeconds: s.compressCpuSeconds, recordsBytes, batches: s.batchesAcked }
    }
  )
}

async function runKafkajs(a: Args, perSend: number): Promise<Partial<ClientResult>> {
  const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = kafkajs
  const type = a.spec.codec === 'zstd' ? CompressionTypes.ZSTD : CompressionTypes.LZ4
  ;(CompressionCodecs as unknown as Record<number, () => KafkajsCodec>)[type] = toKafkajsCodec(createCodec(a.spec))
  const producer = new Kafka({
    clientId: 'bench-kafkajs',
    brokers: a.brokers.split(','),
    logLevel: logLevel.ERROR
  }).producer({ allowAutoTopicCreation: false })
  await producer.connect()
  return timed(
    a.passes,
    async () => {
      for (let i = 0; i < a.values.length; i += perSend) {
        const messages = a.values.slice(i, i + perSend).map((value) => ({ value }))
        await producer.send({ topic: a.topic, compression: type, acks: -1, messages })
      }
    },
    async () => {
      await producer.disconnect()
      return {}
    }
  )
}

async function runConfluent(a: Args): Promise<Partial<ClientResult>> {
  const rd = loadConfluentKafkaJavascript()
  const producer = new rd.Producer({
    'bootstrap.servers': a.brokers,
    'compression.codec': a.spec.codec,
    'compression.level': a.spec.level ?? -1,
    'linger.ms': a.lingerMs,
    'batch.size': a.batchSize,
    'batch.num.messages': 1_000_000,
    'message.max.bytes': 4 * 1024 * 1024,
    'enable.idempotence': true,
    acks: 'all',
    dr_cb: false
  })
  await new Promise<void>((resolve, reject) => producer.connect({}, (err) => (err ? reject(err) : resolve())))
  producer.setPollInterval(50)
  const queueFull = rd.CODES.ERRORS['ERR__QUEUE_FULL']
  return timed(
    a.passes,
    async () => {
      for (const value of a.values) {
        for (;;) {
          try {
            producer.produce(a.topic, null, value, null)
            break
          } catch (err) {
            if ((err as { code?: number }).code !== queueFull) throw err
            await new Promise((r) => setTimeout(r, 5))
          }
        }
      }
      await new Promise<void>((resolve, reject) => producer.flush(60_000, (err) => (err ? reject(err) : resolve())))
    },
    async () => {
      await new Promise<void>((resolve) => producer.disconnect(() => resolve()))
      return {}
    }
  )
}

/**
 * Sends the values `passes` times, each pass timed from its first send to its last acknowledgement, and reports
 * the last pass: the steady rate of a client that has been running, as kcat's marginal rate (2N minus N
 * records) is. Every pass's time is reported too. CPU covers all passes.
 */
async function timed(
  passes: number,
  pass: () => Promise<void>,
  after: () => Promise<Partial<ClientResult>>
): Promise<Partial<ClientResult>> {
  const cpu0 = process.cpuUsage()
  const passSeconds: number[] = []
  let lastPassCpuSeconds = NaN
  let lastPassMainThreadCpuSeconds = NaN
  let lastPassMinorFaults = NaN
  for (let p = 0; p < passes; p++) {
    const t0 = process.hrtime.bigint()
    const passCpu0 = process.cpuUsage()
    const main0 = threadCpuSeconds()
    const faults0 = process.resourceUsage().minorPageFault
    const profiling = p === passes - 1 ? await startProfile() : null
    await pass()
    await profiling?.()
    passSeconds.push(Number(process.hrtime.bigint() - t0) / 1e9)
    lastPassMainThreadCpuSeconds = threadCpuSeconds() - main0
    lastPassMinorFaults = process.resourceUsage().minorPageFault - faults0
    const passCpu = process.cpuUsage(passCpu0)
    lastPassCpuSeconds = (passCpu.user + passCpu.system) / 1e6
  }
  const cpu = process.cpuUsage(cpu0)
  return {
    seconds: passSeconds[passSeconds.length - 1] ?? NaN,
    passSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    lastPassCpuSeconds,
    lastPassMainThreadCpuSeconds,
    lastPassMinorFaults,
    ...(await after())
  }
}

/**
 * With BENCH_CPU_PROFILE=FILE, a V8 CPU profile of the event loop during the timed (last) pass only, where
 * `node --cpu-prof` would also hold the loading, the first pass's compiling and the shutdown.
 */
async function startProfile(): Promise<(() => Promise<void>) | null> {
  const file = process.env['BENCH_CPU_PROFILE']
  if (file === undefined || file === '') return null
  const session = new Session()
  session.connect()
  const post = (method: string, params: object = {}): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, params, (err, result) => (err === null ? resolve(result) : reject(err)))
    )
  await post('Profiler.enable')
  await post('Profiler.setSamplingInterval', { interval: 200 })
  await post('Profiler.start')
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: object }
    writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      client: { type: 'string' },
      brokers: { type: 'string' },
      topic: { type: 'string' },
      input: { type: 'string' },
      codec: { type: 'string' },
      level: { type: 'string' },
      'linger-ms': { type: 'string' },
      'batch-size': { type: 'string' },
      records: { type: 'string' },
      passes: { type: 'string' },
      threads: { type: 'string' }
    }
  })
  const client = v.client as NodeClient
  const all = readLengthPrefixed(v.input ?? '')
  const values = v.records === undefined ? all : all.slice(0, Number(v.records))
  const codec = v.codec === 'lz4' ? 'lz4' : 'zstd'
  const args: Args = {
    client,
    brokers: v.brokers ?? '',
    topic: v.topic ?? '',
    values,
    spec: { codec, level: v.level === undefined ? (codec === 'lz4' ? 1 : 3) : Number(v.level) },
    lingerMs: Number(v['linger-ms'] ?? 100),
    batchSize: Number(v['batch-size'] ?? 1048576),
    passes: Math.max(1, Number(v.passes ?? 1)),
    threads: v.threads === undefined ? undefined : Number(v.threads)
  }
  const run =
    client === 'squeeze'
      ? runSqueeze(args)
      : client === 'kafkajs-each'
        ? runKafkajs(args, 1)
        : client === 'kafkajs-1000'
          ? runKafkajs(args, 1000)
          : client === 'confluent'
            ? runConfluent(args)
            : Promise.reject(new Error(`unknown --client ${String(client)}`))
  const result = await run
  process.stdout.write(`${JSON.stringify({ client, records: values.length, ...result })}\n`)
}

await main()
