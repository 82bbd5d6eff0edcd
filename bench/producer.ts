import { fileURLToPath } from 'node:url'
import { formatCodecSpec, type CodecSpec } from '../lib/codecs/index.js'
import { KafkaMainClasses } from '../lib/embedded-broker/java-tools.js'
import { batchSetOf, sweepCodecs } from '../lib/sweep/codec-sweep.js'
import { ceilingFor, TARGETS, type CeilingRow } from './codec-ceiling.js'
import {
  benchRuns,
  envInt,
  fmt,
  fmtRatio,
  gb,
  mb,
  median,
  must,
  ratio,
  roundOrder,
  runChild,
  runNodeClient,
  table,
  type ChildRun
} from './lib/harness.js'
import type { InputFiles, InputKind } from './lib/inputs.js'
import { PARTITIONS, runJava, type BenchKafka } from './lib/kafka-env.js'
import { confluentPeer } from './lib/peers.js'

/**
 * Producer benchmark: every peer sends the same values (corpus lines in order, or generated Cap'n Proto HTTP
 * records) to a fresh topic on the same broker, with the same codec, level, linger.ms and batch.size.
 * records/s is each tool's own send-to-last-ack time (in-process for Node peers, ProducerPerformance's own
 * figure, whole process for kcat minus its own start-up wall time on a 1-record run). CPU per GB is the child's user+system CPU
 * (GNU time) minus the same tool's start-up CPU (a 1-record run), per GB of value bytes. Peak RSS is GNU time's.
 */

export const LINGER_MS = envInt('BENCH_LINGER_MS', 100)
export const BATCH_BYTES = envInt('BENCH_BATCH_BYTES', 1_048_576)

export type PeerName =
  'squeeze' | 'squeeze-1t' | 'squeeze-2t' | 'kafkajs-1000' | 'kafkajs-each' | 'confluent' | 'kcat' | 'java-perf'

export interface ProducerSample {
  readonly recordsPerSecond: number
  readonly firstPassRecordsPerSecond?: number
  readonly cpuSeconds: number
  readonly maxRssMb: number
  readonly records: number
  readonly valueBytes: number
  readonly storedBytes: number
  readonly compressMBps?: number
  /** squeeze only: the library alone on this run's own stored batches, right after the run (sameBatchCeiling). */
  readonly compressCeilingMBps?: number
  readonly batches?: number
  readonly meanBatchKb?: number
}

export interface ProducerRow {
  readonly peer: PeerName
  readonly input: InputKind
  readonly target: string
  readonly runs: number
  readonly recordsPerSecond: number
  /** records/s of each run, in run order: runs of different peers with the same index ran in the same round. */
  readonly perRun: readonly number[]
  /** Node peers: the first of their passes (cold: V8 still compiling the send path). */
  readonly firstPassRecordsPerSecond?: number
  readonly mbPerSecond: number
  readonly cpuSecondsPerGb: number
  readonly maxRssMb: number
  readonly storedBytes: number
  readonly ratio: number
  readonly meanBatchKb: number
  /**
   * squeeze only: compression path MB of records per CPU second of sealing (the compression threads' CPU per batch,
   * hand-off included, or the event loop's CPU over an inline seal's compress call).
   */
  readonly compressMBps?: number
  /** squeeze only: median of the library alone on each run's own batches (sameBatchCeiling). */
  readonly compressCeilingMBps?: number
  /** squeeze only: median over runs of compressMBps / the same run's compressCeilingMBps. */
  readonly compressVsCeiling?: number
  readonly note?: string
}

interface RunContext {
  readonly kafka: BenchKafka
  readonly input: InputFiles
  readonly spec: CodecSpec
  readonly topic: string
  readonly records: number
}

const CLIENT = fileURLToPath(new URL('./producer-client.js', import.meta.url))
const SLOW_RECORDS = envInt('BENCH_KAFKAJS_EACH_RECORDS', 2000)
/**
 * Node peers send the input this many times in one process and report the last pass: the steady rate, as
 * kcat's marginal rate is; the first pass also pays for V8 compiling the send path (2-2.5x slower for squeeze's
 * record encoding on its first pass here). Stored bytes and CPU cover every pass.
 */
const NODE_PASSES = envInt('BENCH_NODE_PASSES', 2)

interface PeerRun {
  run: ChildRun
  recordsPerSecond: number
  compressMBps?: number
  /** How many times the input went to the topic (stored bytes and CPU cover all of them). */
  passes?: number
  /** Node peers: records/s of their first pass, for the record. */
  firstPassRecordsPerSecond?: number
}

function nodeClient(client: string, extraArgs: readonly string[] = []) {
  return async (ctx: RunContext): Promise<PeerRun> => {
    const passes = ctx.records === 1 ? 1 : NODE_PASSES
    const run = must(
      await runNodeClient(CLIENT, [
        '--client',
        client,
        '--brokers',
        ctx.kafka.brokers,
        '--topic',
        ctx.topic,
        '--input',
        ctx.input.lengthPrefixed,
        '--codec',
        ctx.spec.codec,
        '--level',
        String(ctx.spec.level),
        '--linger-ms',
        String(LINGER_MS),
        '--batch-size',
        String(BATCH_BYTES),
        '--records',
        String(ctx.records),
        '--passes',
        String(passes),
        ...extraArgs
      ]),
      client
    )
    const out = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as {
      records: number
      seconds: number
      passSeconds: number[]
      compressCpuSeconds?: number
      recordsBytes?: number
    }
    const compressMBps =
      out.compressCpuSeconds !== undefined && out.recordsBytes !== undefined
        ? mb(out.recordsBytes) / out.compressCpuSeconds
        : undefined
    const first = out.passSeconds[0]
    return {
      run,
      recordsPerSecond: out.records / out.seconds,
      passes,
      ...(first === undefined ? {} : { firstPassRecordsPerSecond: out.records / first }),
      ...(compressMBps === undefined ? {} : { compressMBps })
    }
  }
}

function kcatArgs(ctx: RunContext): string[] {
  return [
    '-P',
    '-b',
    ctx.kafka.brokers,
    '-t',
    ctx.topic,
    '-z',
    ctx.spec.codec,
    '-X',
    `compression.level=${ctx.spec.level ?? -1}`,
    '-X',
    `linger.ms=${LINGER_MS}`,
    '-X',
    `batch.size=${BATCH_BYTES}`,
    '-X',
    'batch.num.messages=1000000',
    '-X',
    'message.max.bytes=4194304',
    '-X',
    'enable.idempotence=true',
    '-D',
    ctx.input.kcatDelimiter,
    '-l'
  ]
}

/**
 * kcat reports no rate of its own and its whole-process time includes connecting, metadata and the final flush,
 * which on runs of a few tenths of a second swamp the sending. Its rate is therefore marginal: the same records
 * once and twice over (into a second topic), records / (wall(2N) - wall(N)). That leaves out kcat's start-up and
 * tail, and squeeze's own figure keeps both, so the ratio leans against squeeze, not for it.
 */
async function kcat(ctx: RunContext): Promise<PeerRun> {
  if (ctx.records === 1) {
    const file = `${ctx.input.delimited}.one`
    const { readFileSync, writeFileSync } = await import('node:fs')
    writeFileSync(file, readFileSync(ctx.input.delimited).subarray(0, 200).toString('latin1').split('\n')[0] ?? 'x')
    const run = must(await runChild('kcat', [...kcatArgs(ctx), file]), 'kcat -P')
    return { run, recordsPerSecond: 1 / run.wallSeconds }
  }
  const run = must(await runChild('kcat', [...kcatArgs(ctx), ctx.input.delimited]), 'kcat -P')
  const twiceTopic = await ctx.kafka.createTopic(`${ctx.topic}-twice`, PARTITIONS)
  const twice = must(
    await runChild('kcat', [...kcatArgs({ ...ctx, topic: twiceTopic }), ctx.input.delimitedTwice]),
    'kcat -P (twice)'
  )
  return { run, recordsPerSecond: ctx.input.records / Math.max(0.01, twice.wallSeconds - run.wallSeconds) }
}

async function javaPerf(ctx: RunContext): Promise<PeerRun> {
  const level = [`compression.${ctx.spec.codec}.level=${javaLevel(ctx.spec)}`]
  const run = must(
    await runJava(KafkaMainClasses.PRODUCER_PERFORMANCE, [
      '--topic',
      ctx.topic,
      '--num-records',
      String(ctx.records),
      '--payload-file',
      ctx.input.delimited,
      '--throughput',
      '-1',
      '--producer-props',
      `bootstrap.servers=${ctx.kafka.brokers}`,
      `compression.type=${ctx.spec.codec}`,
      ...level,
      `linger.ms=${LINGER_MS}`,
      `batch.size=${BATCH_BYTES}`,
      'acks=all',
      'enable.idempotence=true',
      'max.request.size=4194304'
    ]),
    'ProducerPerformance'
  )
  // The summary is the last such line: a slow start also prints 5-second progress lines before it.
  const m = [...run.stdout.matchAll(/records sent, ([\d.]+) records\/sec/g)].at(-1)
  return { run, recordsPerSecond: m === undefined ? NaN : Number(m[1]) }
}

/**
 * The Java producer's level for the same algorithm: its lz4 level 9 (the default) is lz4-java's fast compressor,
 * which is what squeeze's and librdkafka's lz4:1 are; any other Java lz4 level is LZ4HC at that level, and
 * none is LZ4HC 9 (squeeze's lz4:9), so that target has no Java peer.
 */
export function javaLevel(spec: CodecSpec): number {
  if (spec.codec !== 'lz4') return spec.level ?? 1
  if (spec.level === 1) return 9
  throw new Error(
    `no Java compression.lz4.level gives squeeze's ${formatCodecSpec(spec)} (Java's 9 is the fast compressor)`
  )
}

interface PeerDef {
  readonly name: PeerName
  readonly records: (input: InputFiles) => number
  readonly accepts: (input: InputFiles) => string | null
  readonly run: (ctx: RunContext) => Promise<PeerRun>
}

/**
 * The producer peers, or those of them named. `squeeze` runs its default compression pool (cores - 1 threads);
 * `squeeze-1t` and `squeeze-2t` set the pool to 1 and 2 threads (-X squeeze.compression.threads).
 */
export function producerPeers(names?: readonly PeerName[]): PeerDef[] {
  const confluent = names === undefined || names.includes('confluent') ? confluentPeer() : null
  const all = (i: InputFiles): number => i.records
  const ok = (): null => null
  const peers: PeerDef[] = [
    { name: 'squeeze', records: all, accepts: ok, run: nodeClient('squeeze') },
    { name: 'squeeze-1t', records: all, accepts: ok, run: nodeClient('squeeze', ['--threads', '1']) },
    { name: 'squeeze-2t', records: all, accepts: ok, run: nodeClient('squeeze', ['--threads', '2']) },
    { name: 'kcat', records: all, accepts: ok, run: kcat },
    {
      name: 'java-perf',
      records: all,
      accepts: (i) =>
        i.javaReplayable
          ? null
          : "ProducerPerformance reads --payload-file as UTF-8 text split on a delimiter: binary Cap'n Proto values cannot be replayed unchanged",
      run: javaPerf
    },
    {
      name: 'confluent',
      records: all,
      accepts: () => (confluent === null ? 'left out by BENCH_SKIP=confluent' : null),
      run: nodeClient('confluent')
    },
    { name: 'kafkajs-1000', records: all, accepts: ok, run: nodeClient('kafkajs-1000') },
    {
      name: 'kafkajs-each',
      records: (i) => Math.min(SLOW_RECORDS, i.records),
      accepts: ok,
      run: nodeClient('kafkajs-each')
    }
  ]
  const wanted = names ?? ['squeeze', 'kcat', 'java-perf', 'confluent', 'kafkajs-1000', 'kafkajs-each']
  return peers.filter((p) => wanted.includes(p.name))
}

export interface ProducerBenchOptions {
  readonly targets?: readonly CodecSpec[]
  readonly peers?: readonly PeerName[]
  readonly runs?: number
}

/** 1-record runs per tool whose median is its start-up cost: one sample of squeeze's moved by 0.25 CPU s from run to run. */
const STARTUP_SAMPLES = 3

/**
 * Start-up CPU of each tool (the median of STARTUP_SAMPLES 1-record runs): subtracted so CPU per GB measures the
 * sending, not the JVM or Node starting. A single sample (1.08-1.32 CPU s for squeeze on this machine) moved the
 * lz4 rows' CPU per GB by up to ~3 s/GB, as 0.1 GB runs divide the difference.
 */
async function startupCost(
  kafka: BenchKafka,
  peers: readonly PeerDef[],
  input: InputFiles
): Promise<Map<PeerName, { cpu: number; wall: number }>> {
  const out = new Map<PeerName, { cpu: number; wall: number }>()
  for (const peer of peers) {
    if (peer.accepts(input) !== null) continue
    const cpu: number[] = []
    const wall: number[] = []
    for (let i = 0; i < STARTUP_SAMPLES; i++) {
      const topic = await kafka.createTopic(`bench-startup-${peer.name}-${Date.now()}-${i}`, PARTITIONS)
      const r = await peer.run({ kafka, input, spec: { codec: 'zstd', level: 3 }, topic, records: 1 })
      cpu.push(r.run.cpuSeconds)
      wall.push(r.run.wallSeconds)
    }
    out.set(peer.name, { cpu: median(cpu), wall: median(wall) })
  }
  return out
}

/**
 * One untimed run per input and codec before the timed rounds, by the first peer that takes the input: the first
 * large batches of a codec after the broker starts meet a cold JVM (the code that validates and appends them not
 * compiled yet), and whichever peer met them first was slowed by it.
 */
async function warmBroker(
  kafka: BenchKafka,
  peers: readonly PeerDef[],
  inputs: readonly InputFiles[],
  targets: readonly CodecSpec[],
  log: (s: string) => void
): Promise<void> {
  for (const input of inputs) {
    const peer = peers.find((p) => p.accepts(input) === null)
    if (peer === undefined) continue
    for (const spec of targets) {
      const target = formatCodecSpec(spec)
      const topic = await kafka.createTopic(
        `bench-warm-${input.kind}-${target.replace(':', '-')}-${Date.now()}`,
        PARTITIONS
      )
      const r = await peer.run({ kafka, input, spec, topic, records: peer.records(input) })
      log(`producer warm-up (not counted) ${peer.name}|${input.kind}|${target}: ${fmt(r.recordsPerSecond)} records/s`)
    }
    await kafka.deleteCreatedTopics()
  }
}

export async function producerBench(
  kafka: BenchKafka,
  inputs: readonly InputFiles[],
  ceilings: readonly CeilingRow[],
  log: (s: string) => void,
  options: ProducerBenchOptions = {}
): Promise<ProducerRow[]> {
  const peers = producerPeers(options.peers)
  const targets = options.targets ?? TARGETS
  const runs = options.runs ?? benchRuns()
  const firstInput = inputs[0]
  if (firstInput === undefined) return []
  const startup = await startupCost(kafka, peers, firstInput)
  log(
    `start-up subtracted (CPU s / wall s, median of ${STARTUP_SAMPLES} 1-record runs): ${[...startup].map(([p, c]) => `${p} ${c.cpu.toFixed(2)}/${c.wall.toFixed(2)}`).join(', ')}`
  )
  await warmBroker(kafka, peers, inputs, targets, log)
  const samples = new Map<string, ProducerSample[]>()
  for (let run = 0; run < runs; run++) {
    for (const input of inputs) {
      for (const spec of targets) {
        for (const peer of roundOrder(peers, run)) {
          if (peer.accepts(input) !== null) continue
          const target = formatCodecSpec(spec)
          const records = peer.records(input)
          const topic = await kafka.createTopic(
            `bench-prod-${peer.name}-${input.kind}-${target.replace(':', '-')}-${run}-${Date.now()}`,
            PARTITIONS
          )
          const r = await peer.run({ kafka, input, spec, topic, records })
          const valueBytes = input.valueBytes * (records / input.records) * (r.passes ?? 1)
          const storedBytes = await kafka.storedBytes(topic)
          const shape = run === 0 ? await kafka.batchShape(topic) : undefined
          const ceiling = r.compressMBps === undefined ? undefined : await sameBatchCeiling(kafka, topic, spec)
          const key = `${peer.name}|${input.kind}|${target}`
          const list = samples.get(key) ?? []
          list.push({
            recordsPerSecond: r.recordsPerSecond,
            cpuSeconds: Math.max(0, r.run.cpuSeconds - (startup.get(peer.name)?.cpu ?? 0)),
            maxRssMb: r.run.maxRssMb,
            records: records * (r.passes ?? 1),
            valueBytes,
            storedBytes,
            ...(r.compressMBps === undefined ? {} : { compressMBps: r.compressMBps }),
            ...(ceiling === undefined ? {} : { compressCeilingMBps: ceiling }),
            ...(r.firstPassRecordsPerSecond === undefined
              ? {}
              : { firstPassRecordsPerSecond: r.firstPassRecordsPerSecond }),
            ...(shape === undefined
              ? {}
              : { batches: shape.batches, meanBatchKb: shape.uncompressedBytes / shape.batches / 1024 })
          })
          samples.set(key, list)
          const firstPass =
            r.firstPassRecordsPerSecond === undefined ? '' : ` (first pass ${fmt(r.firstPassRecordsPerSecond)})`
          log(
            `producer run ${run + 1}/${runs} ${key}: ${fmt(r.recordsPerSecond)} records/s${firstPass}, ${r.run.cpuSeconds.toFixed(2)} s CPU, ${r.run.maxRssMb.toFixed(0)} MB RSS`
          )
        }
        await kafka.deleteCreatedTopics()
      }
    }
  }
  const rows: ProducerRow[] = []
  for (const input of inputs) {
    for (const spec of targets) {
      const target = formatCodecSpec(spec)
      for (const peer of peers) {
        const list = samples.get(`${peer.name}|${input.kind}|${target}`)
        if (list === undefined) continue
        const first = list[0] as ProducerSample
        const rps = median(list.map((s) => s.recordsPerSecond))
        const compress = median(list.map((s) => s.compressMBps ?? NaN))
        const compressCeiling = median(list.map((s) => s.compressCeilingMBps ?? NaN))
        const vsCeiling = median(list.map((s) => (s.compressMBps ?? NaN) / (s.compressCeilingMBps ?? NaN)))
        const firstPass = median(list.map((s) => s.firstPassRecordsPerSecond ?? NaN))
        rows.push({
          peer: peer.name,
          input: input.kind,
          target,
          runs: list.length,
          recordsPerSecond: rps,
          perRun: list.map((s) => s.recordsPerSecond),
          ...(Number.isFinite(firstPass) ? { firstPassRecordsPerSecond: firstPass } : {}),
          mbPerSecond: (rps * (first.valueBytes / first.records)) / 1e6,
          cpuSecondsPerGb: median(list.map((s) => s.cpuSeconds / gb(s.valueBytes))),
          maxRssMb: Math.max(...list.map((s) => s.maxRssMb)),
          storedBytes: median(list.map((s) => s.storedBytes)),
          ratio: median(list.map((s) => s.valueBytes / s.storedBytes)),
          meanBatchKb: first.meanBatchKb ?? NaN,
          ...(Number.isFinite(compress) ? { compressMBps: compress } : {}),
          ...(Number.isFinite(vsCeiling) ? { compressCeilingMBps: compressCeiling, compressVsCeiling: vsCeiling } : {}),
          ...(peer.name === 'java-perf'
            ? { note: 'ProducerPerformance picks payload lines at random (not in file order)' }
            : {})
        })
      }
    }
  }
  void ceilings
  return rows
}

/**
 * The codec library alone on the batches a squeeze run stored: read back, decompressed, and compressed again in
 * this process as the ceiling section compresses its own (codec-ceiling.ts), right after the run. The same bytes cut
 * at the same places, where the ceiling section cuts the input in file order at batch.size (fuller batches than a
 * run whose batches close at linger.ms), and at the same moment's machine load.
 */
async function sameBatchCeiling(kafka: BenchKafka, topic: string, spec: CodecSpec): Promise<number> {
  const batches = batchSetOf(await kafka.recordSections(topic), BATCH_BYTES)
  const [lib] = sweepCodecs(batches, [spec], { runs: 3, minRunCpuSeconds: 0.3 })
  return lib?.compressMBPerSecond ?? NaN
}

export function producerTable(rows: readonly ProducerRow[], ceilings: readonly CeilingRow[]): string {
  const squeezeOf = (r: ProducerRow): ProducerRow | undefined =>
    rows.find((s) => s.peer === 'squeeze' && s.input === r.input && s.target === r.target)
  return table(
    [
      'input',
      'codec',
      'peer',
      'records/s',
      '1st pass rec/s',
      'MB/s in',
      'CPU s/GB',
      'peak RSS MB',
      'stored MB',
      'ratio',
      'batch KB',
      'squeeze/peer rec/s',
      'squeeze/peer CPU/GB',
      'vs lib ceiling'
    ],
    rows.map((r) => {
      const s = squeezeOf(r)
      const ceiling = ceilingFor(ceilings, r.input, r.target)
      return [
        r.input,
        r.target,
        r.peer,
        fmt(r.recordsPerSecond),
        r.firstPassRecordsPerSecond === undefined ? '-' : fmt(r.firstPassRecordsPerSecond),
        fmt(r.mbPerSecond, 1),
        fmt(r.cpuSecondsPerGb, 1),
        fmt(r.maxRssMb),
        fmt(mb(r.storedBytes), 2),
        fmt(r.ratio, 2),
        fmt(r.meanBatchKb),
        s === undefined || s === r ? '-' : fmtRatio(ratio(s.recordsPerSecond, r.recordsPerSecond)),
        s === undefined || s === r ? '-' : fmtRatio(ratio(s.cpuSecondsPerGb, r.cpuSecondsPerGb)),
        ceiling === undefined ? '-' : `${((r.mbPerSecond / ceiling.libCompressMBps) * 100).toFixed(0)}%`
      ]
    })
  )
}

/** Stored ratio of Kafka's Java producer on the corpus in file order (ConsoleProducer), for the within-2% target. */
export async function javaOrderedRatio(
  kafka: BenchKafka,
  input: InputFiles,
  spec: CodecSpec
): Promise<{ ratio: number; meanBatchKb: number; batches: number }> {
  const topic = await kafka.createTopic(
    `bench-java-console-${formatCodecSpec(spec).replace(':', '-')}-${Date.now()}`,
    PARTITIONS
  )
  const props = [
    `compression.type=${spec.codec}`,
    `compression.${spec.codec}.level=${javaLevel(spec)}`,
    `linger.ms=${LINGER_MS}`,
    `batch.size=${BATCH_BYTES}`,
    'max.request.size=4194304',
    'acks=all'
  ]
  must(
    await runJava(
      KafkaMainClasses.CONSOLE_PRODUCER,
      [
        '--bootstrap-server',
        kafka.brokers,
        '--topic',
        topic,
        '--compression-codec',
        spec.codec,
        '--max-partition-memory-bytes',
        String(BATCH_BYTES),
        '--timeout',
        String(LINGER_MS),
        ...props.flatMap((p) => ['--producer-property', p])
      ],
      { stdinFile: input.delimited }
    ),
    'ConsoleProducer'
  )
  const stored = await kafka.storedBytes(topic)
  const shape = await kafka.batchShape(topic)
  await kafka.deleteCreatedTopics()
  return {
    ratio: input.valueBytes / stored,
    meanBatchKb: shape.uncompressedBytes / shape.batches / 1024,
    batches: shape.batches
  }
}

/**
 * Medians with their spread over runs, and each row's records/s over `reference`'s: as a ratio of medians, and
 * run by run (the runs with one index ran in the same round, minutes apart at most), with the range of those.
 */
export function spreadTable(rows: readonly ProducerRow[], reference: PeerName): string {
  return table(
    [
      'input',
      'codec',
      'peer',
      'runs',
      'records/s median',
      'min-max',
      'CPU s/GB',
      'peak RSS MB',
      'ratio',
      `/${reference} (medians)`,
      `/${reference} per run, min-max`
    ],
    rows.map((r) => {
      const ref = rows.find((o) => o.peer === reference && o.input === r.input && o.target === r.target)
      const paired =
        ref === undefined || ref === r
          ? []
          : r.perRun.map((v, i) => ratio(v, ref.perRun[i] ?? NaN)).filter(Number.isFinite)
      return [
        r.input,
        r.target,
        r.peer,
        String(r.runs),
        fmt(r.recordsPerSecond),
        `${fmt(Math.min(...r.perRun))}-${fmt(Math.max(...r.perRun))}`,
        fmt(r.cpuSecondsPerGb, 1),
        fmt(r.maxRssMb),
        fmt(r.ratio, 2),
        ref === undefined || ref === r ? '-' : fmtRatio(ratio(r.recordsPerSecond, ref.recordsPerSecond)),
        paired.length === 0 ? '-' : `${fmtRatio(Math.min(...paired))}-${fmtRatio(Math.max(...paired))}`
      ]
    })
  )
}

/** "corpus zstd:3 413 MB/s per CPU s = 95% of the library on the same batches (77% of the ceiling section's)". */
export function compressionPathNote(row: ProducerRow, ceiling: CeilingRow | undefined): string {
  const percent = (x: number | undefined): string => (x === undefined ? '-' : `${(x * 100).toFixed(0)}%`)
  const sameBatches = `${percent(row.compressVsCeiling)} of the library on the same batches (${fmt(row.compressCeilingMBps ?? NaN)} MB/s)`
  const section = ceiling === undefined ? undefined : (row.compressMBps ?? NaN) / ceiling.libCompressMBps
  return `${row.input} ${row.target} ${fmt(row.compressMBps ?? NaN)} MB/s per CPU s = ${sameBatches}, ${percent(section)} of the ceiling section's`
}
