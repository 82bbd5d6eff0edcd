import { fileURLToPath } from 'node:url'
import { formatCodecSpec } from '../lib/codecs/index.js'
import { TARGETS, ceilingFor, type CeilingRow } from './codec-ceiling.js'
import {
  benchRuns,
  envInt,
  fmt,
  fmtRatio,
  gb,
  median,
  must,
  ratio,
  runChild,
  runNodeClient,
  table,
  type ChildRun
} from './lib/harness.js'
import type { InputFiles } from './lib/inputs.js'
import { PARTITIONS, runJava, type BenchKafka } from './lib/kafka-env.js'

/**
 * Consumer benchmark: one topic per codec, written once by squeeze's producer from the generated Cap'n Proto
 * HTTP input, then read from the beginning to the end by each peer: squeeze decompressing only, squeeze
 * decompressing and decoding every record (format http), kcat -C, and Kafka's ConsumerPerformance.
 * records/s: in-process for squeeze (after connecting), kcat's first printed record to its last,
 * ConsumerPerformance's own
 * fetch.nMsg.sec (after the group formed). CPU per GB (of uncompressed values): GNU time's user+system
 * minus the same tool's start-up CPU measured on a 1-record topic.
 */

type ConsumerPeer = 'squeeze-decompress' | 'squeeze-decode' | 'kcat' | 'java-perf'

export interface ConsumerRow {
  readonly peer: ConsumerPeer
  readonly target: string
  readonly runs: number
  readonly records: number
  readonly recordsPerSecond: number
  /** squeeze: its first read (cold). */
  readonly firstPassRecordsPerSecond?: number
  readonly mbPerSecond: number
  readonly cpuSecondsPerGb: number
  readonly maxRssMb: number
}

const CLIENT = fileURLToPath(new URL('./consumer-client.js', import.meta.url))
const PRODUCER_CLIENT = fileURLToPath(new URL('./producer-client.js', import.meta.url))

/**
 * squeeze's consumer reads each topic this many times in one process and reports the last read (the steady rate,
 * as kcat's first-to-last-record figure is); the first read also pays for V8 compiling the read path.
 */
const SQUEEZE_PASSES = envInt('BENCH_NODE_PASSES', 2)

interface ConsumerPeerRun {
  run: ChildRun
  recordsPerSecond: number
  /** Reads of the topic in the run (CPU covers all of them). */
  passes?: number
  firstPassRecordsPerSecond?: number
}

async function runPeer(
  peer: ConsumerPeer,
  kafka: BenchKafka,
  topic: string,
  records: number
): Promise<ConsumerPeerRun> {
  if (peer === 'squeeze-decompress' || peer === 'squeeze-decode') {
    const passes = records === 1 ? 1 : SQUEEZE_PASSES
    const run = must(
      await runNodeClient(CLIENT, [
        '--brokers',
        kafka.brokers,
        '--topic',
        topic,
        '--format',
        peer === 'squeeze-decode' ? 'http' : 'none',
        '--passes',
        String(passes)
      ]),
      peer
    )
    const out = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as {
      records: number
      seconds: number
      passSeconds: number[]
      corruptRecords: number
    }
    if (out.records !== records || out.corruptRecords > 0)
      throw new Error(`${peer} read ${out.records} records (${out.corruptRecords} corrupt), expected ${records}`)
    const first = out.passSeconds[0]
    return {
      run,
      recordsPerSecond: out.records / out.seconds,
      passes,
      ...(first === undefined ? {} : { firstPassRecordsPerSecond: out.records / first })
    }
  }
  if (peer === 'kcat') {
    // Timed from the first record kcat prints to the last (its stdout as it arrives, in stdio-buffer chunks of
    // a few hundred offsets): start-up, metadata and shutdown are left out without subtracting a separate run,
    // whose wall time (0.01-0.5 s, fetch waits on empty partitions) swamped the reading. -c exits at the count.
    // Not a marginal N-vs-N/2 rate as for the producer: librdkafka prefetches in background threads, so by the
    // time it has handed over half the records it has fetched and decompressed far more.
    const run = must(
      await runChild(
        'kcat',
        ['-C', '-b', kafka.brokers, '-t', topic, '-o', 'beginning', '-c', String(records), '-q', '-f', '%o\n'],
        { stdoutSpan: true }
      ),
      'kcat -C'
    )
    return { run, recordsPerSecond: records / Math.max(1e-3, run.stdoutSpanSeconds ?? run.wallSeconds) }
  }
  const run = must(
    await runJava('org.apache.kafka.tools.ConsumerPerformance', [
      '--bootstrap-server',
      kafka.brokers,
      '--topic',
      topic,
      '--messages',
      String(records),
      '--timeout',
      '60000'
    ]),
    'ConsumerPerformance'
  )
  // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
  const line =
    run.stdout
      .trim()
      .split('\n')
      .filter((l) => /^\d{4}-/.test(l))
      .pop() ?? ''
  const cols = line.split(',').map((c) => Number(c.trim()))
  return { run, recordsPerSecond: cols[9] ?? NaN }
}

const PEERS: readonly ConsumerPeer[] = ['squeeze-decompress', 'squeeze-decode', 'kcat', 'java-perf']

/** Writes `records` records (the input replayed as often as needed) with squeeze's producer. */
async function fillTopic(
  kafka: BenchKafka,
  input: InputFiles,
  name: string,
  codec: string,
  level: number | null,
  records: number
): Promise<string> {
  const topic = await kafka.createTopic(name, PARTITIONS)
  for (let left = records; left > 0; left -= input.records) {
    must(
      await runNodeClient(PRODUCER_CLIENT, [
        '--client',
        'squeeze',
        '--brokers',
        kafka.brokers,
        '--topic',
        topic,
        '--input',
        input.lengthPrefixed,
        '--codec',
        codec,
        '--level',
        String(level),
        '--records',
        String(Math.min(left, input.records))
      ]),
      'filling the consumer topic'
    )
  }
  return topic
}

/** Records per consumer topic: the input three times over by default, so each read lasts long enough to time. */
const CONSUMER_RECORDS_FACTOR = envInt('BENCH_CONSUMER_REPEAT', 3)

/** `peers`: [] only fills the topics (the copier's sources). */
export async function consumerBench(
  kafka: BenchKafka,
  input: InputFiles,
  log: (s: string) => void,
  peers: readonly ConsumerPeer[] = PEERS
): Promise<{ rows: ConsumerRow[]; sourceTopics: Map<string, string> }> {
  const runs = benchRuns()
  const one = await fillTopic(kafka, input, `bench-cons-startup-${Date.now()}`, 'zstd', 3, 1)
  const startup = new Map<ConsumerPeer, { cpu: number; wall: number }>()
  for (const peer of peers) {
    const r = (await runPeer(peer, kafka, one, 1)).run
    startup.set(peer, { cpu: r.cpuSeconds, wall: r.wallSeconds })
  }
  log(
    `consumer start-up subtracted (CPU s / wall s): ${[...startup].map(([p, c]) => `${p} ${c.cpu.toFixed(2)}/${c.wall.toFixed(2)}`).join(', ')}`
  )
  const records = input.records * CONSUMER_RECORDS_FACTOR
  const valueBytes = input.valueBytes * CONSUMER_RECORDS_FACTOR
  const topics = new Map<string, string>()
  for (const spec of TARGETS) {
    const target = formatCodecSpec(spec)
    topics.set(
      target,
      await fillTopic(
        kafka,
        input,
        `bench-cons-${input.kind}-${target.replace(':', '-')}-${Date.now()}`,
        spec.codec,
        spec.level,
        records
      )
    )
  }
  const samples = new Map<string, Array<{ rps: number; firstRps: number; cpu: number; rss: number }>>()
  for (let run = 0; run < runs; run++) {
    for (const [target, topic] of topics) {
      for (const peer of peers) {
        const r = await runPeer(peer, kafka, topic, records)
        const key = `${peer}|${target}`
        samples.set(key, [
          ...(samples.get(key) ?? []),
          {
            rps: r.recordsPerSecond,
            firstRps: r.firstPassRecordsPerSecond ?? NaN,
            cpu: Math.max(0, r.run.cpuSeconds - (startup.get(peer)?.cpu ?? 0)) / (r.passes ?? 1),
            rss: r.run.maxRssMb
          }
        ])
        log(
          `consumer run ${run + 1}/${runs} ${key}: ${fmt(r.recordsPerSecond)} records/s, ${r.run.cpuSeconds.toFixed(2)} s CPU`
        )
      }
    }
  }
  const rows: ConsumerRow[] = []
  for (const target of topics.keys()) {
    for (const peer of peers) {
      const list = samples.get(`${peer}|${target}`) ?? []
      const rps = median(list.map((s) => s.rps))
      rows.push({
        peer,
        target,
        runs: list.length,
        records,
        recordsPerSecond: rps,
        ...(Number.isFinite(median(list.map((s) => s.firstRps)))
          ? { firstPassRecordsPerSecond: median(list.map((s) => s.firstRps)) }
          : {}),
        mbPerSecond: (rps * (valueBytes / records)) / 1e6,
        cpuSecondsPerGb: median(list.map((s) => s.cpu / gb(valueBytes))),
        maxRssMb: Math.max(...list.map((s) => s.rss))
      })
    }
  }
  return { rows, sourceTopics: topics }
}

export function consumerTable(rows: readonly ConsumerRow[], ceilings: readonly CeilingRow[]): string {
  return table(
    [
      'codec',
      'peer',
      'records/s',
      '1st pass rec/s',
      'MB/s out',
      'CPU s/GB',
      'peak RSS MB',
      'squeeze decode / peer rec/s',
      'squeeze decompress / peer rec/s',
      'vs lib decompress ceiling'
    ],
    rows.map((r) => {
      const decode = rows.find((s) => s.peer === 'squeeze-decode' && s.target === r.target)
      const decompress = rows.find((s) => s.peer === 'squeeze-decompress' && s.target === r.target)
      const ceiling = ceilingFor(ceilings, 'http', r.target)
      return [
        r.target,
        r.peer,
        fmt(r.recordsPerSecond),
        r.firstPassRecordsPerSecond === undefined ? '-' : fmt(r.firstPassRecordsPerSecond),
        fmt(r.mbPerSecond, 1),
        fmt(r.cpuSecondsPerGb, 1),
        fmt(r.maxRssMb),
        decode === undefined || decode === r ? '-' : fmtRatio(ratio(decode.recordsPerSecond, r.recordsPerSecond)),
        decompress === undefined || decompress === r
          ? '-'
          : fmtRatio(ratio(decompress.recordsPerSecond, r.recordsPerSecond)),
        ceiling === undefined ? '-' : `${((r.mbPerSecond / ceiling.libDecompressMBps) * 100).toFixed(0)}%`
      ]
    })
  )
}
