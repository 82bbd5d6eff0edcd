import { spawn, execFileSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import {
  benchRuns,
  envInt,
  fmt,
  fmtRatio,
  gb,
  median,
  must,
  ratio,
  roundOrder,
  runChild,
  runNodeClient,
  table,
  type ChildRun
} from './lib/harness.js'
import { PARTITIONS, runSectionAlone, type BenchKafka } from './lib/kafka-env.js'
import { procUsage } from './lib/proc-usage.js'
import { corpusLines } from '../test/helpers/corpus.js'
import { FIXTURES } from './parse.js'
import { BATCH_BYTES, LINGER_MS } from './producer.js'

/**
 * What a user runs, end to end: `squeeze produce --source file` (bin/squeeze, the package's command, on this
 * process's node) on each format's corpus file replayed to
 * BENCH_E2E_LINES lines (parse, encode, batch, compress, acknowledged), next to the log shipper people already
 * run, rsyslog (`imfile` -> `omkafka`, librdkafka inside), and `kcat -P -l`, both shipping the same file as raw
 * lines to the same broker with the same codec, linger.ms and batch.size: kcat, with no parsing, is the upper bound.
 *   node dist/bench/end-to-end.js [out.json]      (or `bash scripts/bench.sh e2e`)
 * The access log is also shipped at BENCH_E2E_LONG_LINES lines, a row of its own against kcat alone: there start-up
 * weighs little and the rate is the pipeline's own.
 * Env: BENCH_RUNS (3), BENCH_E2E_LINES (200000), BENCH_E2E_LONG_LINES (2000000; 0: no such row), BENCH_E2E_CODEC
 * (zstd:3), BENCH_E2E_KINDS (all: http,journald,...),
 * BENCH_E2E_BASELINE (another build's bin/squeeze, or its dist/services/cli/main.js run with node as is; one more
 * peer: before/after in one run),
 * KAFKA_BROKERS.
 * Lines/s = lines / wall from spawn until the last line is acknowledged: squeeze and kcat exit then, so it is
 * their whole process (start-up and final flush included); rsyslogd never exits, so it is spawn until the
 * topic's offsets count every line. CPU s per GB of the file: the whole process's user+system CPU (GNU time;
 * rsyslogd's from /proc at that moment); peak RSS likewise; stored ratio = file bytes / bytes on the broker's
 * disk. Medians of BENCH_RUNS, with min-max.
 */
const CLI = fileURLToPath(new URL('../../bin/squeeze', import.meta.url))
export const CODEC = process.env['BENCH_E2E_CODEC'] ?? 'zstd:3'
export const RSYSLOGD = '/usr/sbin/rsyslogd'
/** How often the topic's offsets are read while rsyslogd ships: a few % of a run, at the rates seen here. */
const RSYSLOG_POLL_MS = 20
/** No new line in the topic for this long: rsyslogd is not shipping (an action suspended, a broker refusing). */
const RSYSLOG_STALL_MS = 60_000

export const E2E_PEERS = ['squeeze', 'rsyslog', 'kcat'] as const
/** squeeze-base: another build's CLI (BENCH_E2E_BASELINE=<its bin/squeeze or dist/services/cli/main.js>), for a before/after in one run. */
export type EndToEndPeer = (typeof E2E_PEERS)[number] | 'squeeze-base'
const BASELINE_CLI = process.env['BENCH_E2E_BASELINE']
const PEERS: readonly EndToEndPeer[] = BASELINE_CLI === undefined ? E2E_PEERS : ['squeeze-base', ...E2E_PEERS]
/** The format shipped at BENCH_E2E_LONG_LINES lines too. */
export const LONG_KIND = 'http'

interface Input {
  readonly kind: string
  readonly path: string
  readonly lines: number
  readonly bytes: number
  /** The long run of LONG_KIND: measured against kcat only (rsyslog's rows are the 200,000-line ones). */
  readonly long: boolean
}

interface Sample {
  readonly linesPerSecond: number
  readonly cpuSecondsPerGb: number
  /** The broker's CPU while the peer ran, per GB of the file: what taking in its batches cost (NaN: not measured). */
  readonly brokerCpuSecondsPerGb: number
  readonly maxRssMb: number
  readonly storedRatio: number
}

export interface EndToEndRow {
  readonly kind: string
  readonly peer: EndToEndPeer
  /** What its records hold: squeeze turns access-log lines into Cap'n Proto HTTP records; the rest are lines. */
  readonly stores: string
  readonly lines: number
  readonly bytes: number
  readonly median: Sample
  readonly min: Sample
  readonly max: Sample
}

export interface EndToEndResult {
  readonly lines: number
  readonly codec: string
  readonly runs: number
  /** 1-minute load average when the section started and ended (2 cores: above 2 the peers queue for CPU). */
  readonly load: { readonly start: number; readonly end: number }
  readonly rows: EndToEndRow[]
}

type Measured = Pick<ChildRun, 'wallSeconds' | 'cpuSeconds' | 'maxRssMb'>

/** The corpus file of `kind` replayed in order until `lines` lines. */
function writeInput(dir: string, kind: string, file: string, lines: number, long = false): Input {
  const source = corpusLines(file).filter((l) => l !== '')
  const path = join(dir, `${kind}-${lines}.log`)
  // In slices: the long file's lines as one array and one string would be gigabytes of this process's heap.
  writeFileSync(path, '')
  const SLICE = 100_000
  for (let from = 0; from < lines; from += SLICE) {
    const out = Array.from({ length: Math.min(SLICE, lines - from) }, (_, i) => source[(from + i) % source.length])
    appendFileSync(path, `${out.join('\n')}\n`)
  }
  return { kind, path, lines, bytes: statSync(path).size, long }
}

/** The peers that ship `input`. */
function peersFor(input: Input): readonly EndToEndPeer[] {
  return input.long ? PEERS.filter((p) => p !== 'rsyslog') : PEERS
}

/** The key of an input's samples and rows: its format and length. */
function caseKey(peer: EndToEndPeer, input: Pick<Input, 'kind' | 'lines'>): string {
  return `${peer} ${input.kind} ${input.lines}`
}

/** librdkafka's names for the codec and level, for kcat and omkafka alike. */
function librdkafkaCompression(): { codec: string; level: string } {
  const [codec, level] = CODEC.split(':')
  return { codec: codec as string, level: level ?? '-1' }
}

/** The producer settings every librdkafka peer gets, the same as squeeze's defaults and -X flags here. */
function librdkafkaSettings(): string[] {
  return [
    `linger.ms=${LINGER_MS}`,
    `batch.size=${BATCH_BYTES}`,
    'batch.num.messages=1000000',
    'enable.idempotence=true',
    `compression.codec=${librdkafkaCompression().codec}`
  ]
}

/** `squeeze produce` of the file (or glob) `input.path` with the bench's codec and producer settings. */
export function squeezeArgs(kafka: BenchKafka, topic: string, input: Pick<Input, 'kind' | 'path'>): string[] {
  return [
    'produce',
    '--brokers',
    kafka.brokers,
    '--topic',
    topic,
    '--kind',
    input.kind,
    '--source',
    'file',
    '--file',
    input.path,
    '--codec',
    CODEC,
    '-X',
    `linger.ms=${LINGER_MS}`,
    '-X',
    `batch.size=${BATCH_BYTES}`
  ]
}

function kcatArgs(kafka: BenchKafka, topic: string, input: Input): string[] {
  const settings = [...librdkafkaSettings(), `compression.level=${librdkafkaCompression().level}`]
  return ['-P', '-b', kafka.brokers, '-t', topic, ...settings.flatMap((s) => ['-X', s]), '-l', input.path]
}

/**
 * rsyslogd's own configuration: no system inputs (no /dev/log, no kernel log), only `imfile` reading the file
 * from its start into `omkafka`, each line's text as the record value (no syslog header, no newline), the
 * librdkafka settings in confParam and the level, a topic setting, in topicConfParam; keyless records go to
 * librdkafka's partitioner (partitions.auto), as kcat's do. `imfile` adds settings to the input (its state files).
 */
export function rsyslogConfig(
  work: string,
  input: Pick<Input, 'path'>,
  brokers: string,
  topic: string,
  imfile = ''
): string {
  const list = (values: readonly string[]): string => `[${values.map((v) => `"${v}"`).join(', ')}]`
  return `global(workDirectory="${work}" parser.escapeControlCharactersOnReceive="off")
module(load="imfile" mode="inotify")
module(load="omkafka")
template(name="line" type="string" string="%rawmsg%")
input(type="imfile" file="${input.path}" tag="bench" ruleset="ship" freshStartTail="off"${imfile === '' ? '' : ` ${imfile}`})
ruleset(name="ship") {
  action(type="omkafka" broker=${list(brokers.split(','))} topic="${topic}" template="line" partitions.auto="on"
         confParam=${list(librdkafkaSettings())}
         topicConfParam=${list([`compression.level=${librdkafkaCompression().level}`])})
}
`
}

/** A foreground rsyslogd with its own config, pid file and work directory, until every line is in the topic. */
async function rsyslogRun(kafka: BenchKafka, input: Input, topic: string, dir: string): Promise<Measured> {
  const home = mkdtempSync(join(dir, 'rsyslog-'))
  const work = join(home, 'work')
  mkdirSync(work)
  const conf = join(home, 'rsyslog.conf')
  writeFileSync(conf, rsyslogConfig(work, input, kafka.brokers, topic))
  const spawnedAt = process.hrtime.bigint()
  const child = spawn(RSYSLOGD, ['-n', '-f', conf, '-i', join(home, 'rsyslogd.pid')], {
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8')
  })
  let exit: number | null | undefined
  const exited = new Promise<void>((resolve) =>
    child.on('close', (code) => {
      exit = code
      resolve()
    })
  )
  const failure = (why: string): Error =>
    new Error(`rsyslogd ${input.kind}: ${why}; stderr tail:\n${stderr.trimEnd().split('\n').slice(-15).join('\n')}`)
  try {
    let last = -1
    let progressAt = Date.now()
    for (;;) {
      const count = await kafka.recordCount(topic)
      if (count >= input.lines) {
        const wallSeconds = Number(process.hrtime.bigint() - spawnedAt) / 1e9
        if (count !== input.lines) throw failure(`${count} records for ${input.lines} lines`)
        return { wallSeconds, ...procUsage(child.pid as number) }
      }
      if (exit !== undefined) throw failure(`exited ${exit} with ${count} of ${input.lines} lines in the topic`)
      if (count !== last) {
        last = count
        progressAt = Date.now()
      } else if (Date.now() - progressAt > RSYSLOG_STALL_MS) {
        throw failure(`stuck at ${count} of ${input.lines} lines in the topic for ${RSYSLOG_STALL_MS / 1000} s`)
      }
      await sleep(RSYSLOG_POLL_MS)
    }
  } finally {
    if (exit === undefined) child.kill('SIGTERM')
    await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))])
    rmSync(home, { recursive: true, force: true })
  }
}

/**
 * A launcher (bin/squeeze) runs on this process's node (SQUEEZE_NODE); a .js file (an older build's CLI) on it too,
 * with the same V8 flags (bin/squeeze-node), so the two builds differ only in their code.
 */
function runSqueeze(cli: string, args: readonly string[]): Promise<ChildRun> {
  return cli.endsWith('.js')
    ? runNodeClient(cli, args, { timeoutMs: 600_000 })
    : runChild(cli, args, { timeoutMs: 600_000, env: { SQUEEZE_NODE: process.execPath } })
}

async function sample(
  kafka: BenchKafka,
  input: Input,
  peer: EndToEndPeer,
  round: number,
  dir: string
): Promise<Sample> {
  const topic = await kafka.createTopic(
    `bench-e2e-${peer}-${input.kind}-${input.lines}-${round}-${Date.now()}`,
    PARTITIONS
  )
  const broker0 = kafka.brokerCpuSeconds()
  const run: Measured =
    peer === 'squeeze' || peer === 'squeeze-base'
      ? must(
          await runSqueeze(peer === 'squeeze' ? CLI : (BASELINE_CLI as string), squeezeArgs(kafka, topic, input)),
          `${peer} produce ${input.kind}`
        )
      : peer === 'kcat'
        ? must(await runChild('kcat', kcatArgs(kafka, topic, input), { timeoutMs: 600_000 }), `kcat -P ${input.kind}`)
        : await rsyslogRun(kafka, input, topic, dir)
  const brokerCpuSeconds = kafka.brokerCpuSeconds() - broker0
  const stored = await kafka.storedBytes(topic)
  return {
    linesPerSecond: input.lines / run.wallSeconds,
    cpuSecondsPerGb: run.cpuSeconds / gb(input.bytes),
    brokerCpuSecondsPerGb: brokerCpuSeconds / gb(input.bytes),
    maxRssMb: run.maxRssMb,
    storedRatio: ratio(input.bytes, stored)
  }
}

function row(input: Input, peer: EndToEndPeer, samples: readonly Sample[]): EndToEndRow {
  const at = (how: (values: number[]) => number): Sample => ({
    linesPerSecond: how(samples.map((s) => s.linesPerSecond)),
    cpuSecondsPerGb: how(samples.map((s) => s.cpuSecondsPerGb)),
    brokerCpuSecondsPerGb: how(samples.map((s) => s.brokerCpuSecondsPerGb)),
    maxRssMb: how(samples.map((s) => s.maxRssMb)),
    storedRatio: how(samples.map((s) => s.storedRatio))
  })
  const squeeze = peer === 'squeeze' || peer === 'squeeze-base'
  const stores = squeeze && input.kind === 'http' ? "Cap'n Proto HTTP records" : squeeze ? 'lines (checked)' : 'lines'
  return {
    kind: input.kind,
    peer,
    stores,
    lines: input.lines,
    bytes: input.bytes,
    median: at(median),
    min: at((v) => Math.min(...v)),
    max: at((v) => Math.max(...v))
  }
}

/**
 * Fails now, not after the squeeze rows, when rsyslog cannot run: not installed (scripts/bench.sh installs the
 * Debian packages), or the configuration does not load (`rsyslogd -N1`: a missing omkafka would otherwise only
 * be logged, and the run would wait for lines that never come).
 */
export function checkRsyslog(dir: string, input: Pick<Input, 'path'>, brokers: string): void {
  if (!existsSync(RSYSLOGD))
    throw new Error(
      `end-to-end bench: ${RSYSLOGD} is missing (apt-get install rsyslog rsyslog-kafka; scripts/bench.sh does)`
    )
  const conf = join(dir, 'rsyslog-check.conf')
  writeFileSync(conf, rsyslogConfig(dir, input, brokers, 'bench-e2e-check'))
  try {
    execFileSync(RSYSLOGD, ['-N1', '-f', conf], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (err) {
    const out = err as { stdout?: string; stderr?: string }
    throw new Error(
      `end-to-end bench: rsyslogd -N1 refuses its configuration:\n${out.stderr ?? ''}${out.stdout ?? ''}`,
      {
        cause: err
      }
    )
  }
}

/** Every format's file through squeeze, rsyslog and kcat, BENCH_RUNS rounds, peers interleaved per round. */
export async function endToEndBench(kafka: BenchKafka, dir: string, log: (s: string) => void): Promise<EndToEndResult> {
  const lines = envInt('BENCH_E2E_LINES', 200_000)
  const longLines = envInt('BENCH_E2E_LONG_LINES', 2_000_000)
  const runs = benchRuns()
  const start = loadavg()[0] as number
  const kinds = process.env['BENCH_E2E_KINDS']?.split(',')
  const fixtures = FIXTURES.filter(({ kind }) => kinds?.includes(kind) ?? true)
  const long = fixtures.find((f) => f.kind === LONG_KIND)
  const inputs = [
    ...fixtures.map(({ kind, file }) => writeInput(dir, kind, file, lines)),
    ...(long === undefined || longLines <= 0 || longLines === lines
      ? []
      : [writeInput(dir, long.kind, long.file, longLines, true)])
  ]
  checkRsyslog(dir, inputs[0] as Input, kafka.brokers)
  // One untimed kcat run per file first: the first batches after the broker starts meet a cold JVM, and whichever
  // peer met them was slowed by it (squeeze, which always ran first).
  for (const input of inputs) {
    const warm = await sample(kafka, input, 'kcat', -1, dir)
    log(`e2e warm-up (not counted): kcat ${input.kind} ${(warm.linesPerSecond / 1000).toFixed(0)}k lines/s`)
    await kafka.deleteCreatedTopics()
  }
  const samples = new Map<string, Sample[]>()
  for (let round = 0; round < runs; round++) {
    // Peers interleaved per round, so a load spike on the shared machine spreads over all of them, and rotated, so
    // none always runs first.
    for (const input of inputs) {
      for (const peer of roundOrder(peersFor(input), round)) {
        log(`e2e round ${round + 1}/${runs}: ${peer} ${input.kind} ${input.lines} (load ${loadavg()[0]?.toFixed(1)})`)
        const key = caseKey(peer, input)
        samples.set(key, [...(samples.get(key) ?? []), await sample(kafka, input, peer, round, dir)])
        await kafka.deleteCreatedTopics()
      }
    }
  }
  const rows = inputs.flatMap((input) =>
    peersFor(input).map((peer) => row(input, peer, samples.get(caseKey(peer, input)) ?? []))
  )
  return { lines, codec: CODEC, runs, load: { start, end: loadavg()[0] as number }, rows }
}

/** squeeze's median lines/s over the peer's, per format and file length (unless given, the format's first: BENCH_E2E_LINES). */
export function versusPeer(
  rows: readonly EndToEndRow[],
  kind: string,
  peer: EndToEndPeer,
  of: EndToEndPeer = 'squeeze',
  lines?: number
): number {
  const rate = (p: EndToEndPeer): number =>
    rows.find((r) => r.peer === p && r.kind === kind && (lines === undefined || r.lines === lines))?.median
      .linesPerSecond ?? NaN
  return ratio(rate(of), rate(peer))
}

export function endToEndTitle(result: EndToEndResult): string {
  const long = result.rows.find((r) => r.lines !== result.lines)
  const longer = long === undefined ? '' : ` (${long.kind} also ${long.lines})`
  return `End to end, ${result.lines} lines per file${longer}, ${result.codec}, medians of ${result.runs} (load average ${result.load.start.toFixed(1)} -> ${result.load.end.toFixed(1)} on the 2 cores)`
}

export function endToEndTable(result: EndToEndResult): string {
  const spread = (r: EndToEndRow): string => `${fmt(r.min.linesPerSecond / 1000)}-${fmt(r.max.linesPerSecond / 1000)}`
  return table(
    [
      'format',
      'lines',
      'peer',
      'stores',
      'MB',
      'k lines/s',
      'min-max',
      'CPU s/GB',
      'min-max',
      'broker CPU s/GB',
      'peak RSS MB',
      'stored ratio',
      'vs rsyslog',
      'vs kcat'
    ],
    result.rows.map((r) => [
      r.kind,
      String(r.lines),
      r.peer,
      r.stores,
      fmt(r.bytes / 1e6, 1),
      fmt(r.median.linesPerSecond / 1000),
      spread(r),
      fmt(r.median.cpuSecondsPerGb, 1),
      `${fmt(r.min.cpuSecondsPerGb, 1)}-${fmt(r.max.cpuSecondsPerGb, 1)}`,
      Number.isNaN(r.median.brokerCpuSecondsPerGb) ? '-' : fmt(r.median.brokerCpuSecondsPerGb, 1),
      fmt(r.median.maxRssMb),
      fmt(r.median.storedRatio, 2),
      r.peer.startsWith('squeeze') && r.lines === result.lines
        ? fmtRatio(versusPeer(result.rows, r.kind, 'rsyslog', r.peer, r.lines))
        : '',
      r.peer.startsWith('squeeze') ? fmtRatio(versusPeer(result.rows, r.kind, 'kcat', r.peer, r.lines)) : ''
    ])
  )
}

if (import.meta.url === `file://${process.argv[1]}`)
  await runSectionAlone('end-to-end', endToEndBench, (r) => ({ title: endToEndTitle(r), table: endToEndTable(r) }))
