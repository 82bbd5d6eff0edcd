import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Rng } from '../lib/generators/random.js'
import { checkRsyslog, CODEC, RSYSLOGD, rsyslogConfig } from './end-to-end.js'
import { envInt, fmt, must, runChild, table } from './lib/harness.js'
import { runSectionAlone, type BenchKafka } from './lib/kafka-env.js'
import { LINGER_MS } from './producer.js'

/**
 * The shipper's restart case, with rsyslog as the peer: a file of BENCH_RESTART_LINES numbered syslog lines, a
 * quarter written before the first start and the rest appended while the run goes on (a share per start), is
 * shipped to a topic of one partition (so the file's order is the topic's) while the shipper is SIGKILLed
 * BENCH_RESTART_KILLS times at points seeded by BENCH_RESTART_SEED (each after it shipped SHIPPED_FIRST records in
 * that start) and started again; then it runs until the topic holds no new record for SETTLE_MS, and is stopped
 * with SIGTERM. The topic is read with kcat (read_committed) and each line's number tells lost, duplicated and
 * out-of-order lines (a first copy after a higher number).
 *   node dist/bench/restart.js [out.json]      (or `node dist/bench/run.js restart`)
 * Peers: squeeze at least once (positions in --state-dir), squeeze --exactly-once (positions in a topic, in the
 * records' transactions), and rsyslogd (imfile with its state files, every PERSIST_LINES lines, into omkafka).
 */
const CLI = fileURLToPath(new URL('../../bin/squeeze', import.meta.url))
/** The topic holds no new record for this long: the shipper has read the file to its end. */
const SETTLE_MS = 3000
/** Lines between imfile's state file writes (PersistStateInterval): a checkpoint a second at the rates seen here. */
const PERSIST_LINES = 10_000
/** How long a peer may take to ship its first records of a start before the run fails. */
const START_TIMEOUT_MS = 60_000
/** Records a start ships before its kill point counts: more than the control records a transaction writes. */
const SHIPPED_FIRST = 1000
/** Each kill comes a seeded 0 to this many ms after those records: one or two of --exactly-once's 1 s commits. */
const KILL_WINDOW_MS = 2000

export const RESTART_MODES = ['squeeze at least once', 'squeeze --exactly-once', 'rsyslog imfile'] as const
export type RestartMode = (typeof RESTART_MODES)[number]

export interface RestartRow {
  readonly mode: RestartMode
  readonly lines: number
  readonly kills: number
  /** Records read back (read_committed). */
  readonly records: number
  readonly lost: number
  readonly duplicated: number
  readonly outOfOrder: number
  /** From the first start to the last record in the topic. */
  readonly seconds: number
}

export interface RestartResult {
  readonly lines: number
  readonly kills: number
  readonly seed: number
  readonly load: { readonly start: number; readonly end: number }
  readonly rows: RestartRow[]
}

/** A numbered line in syslog's shape: squeeze sends it as it is (--kind syslog), rsyslog's template too. */
function line(n: number): string {
  return `Dec  4 11:16:33 bench-host app[4242]: seq ${String(n).padStart(7, '0')} GET /api/items?page=${n % 97} 200`
}

function appendLines(path: string, from: number, to: number): void {
  let text = ''
  for (let n = from; n < to; n++) text += `${line(n)}\n`
  appendFileSync(path, text)
}

/** One start of a peer: the process, and a promise of its exit. */
interface Started {
  readonly child: ChildProcess
  readonly exited: Promise<void>
  output(): string
}

function start(cmd: string, args: readonly string[], env: Record<string, string> = {}): Started {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-20_000)
  })
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  return { child, exited, output: () => stderr }
}

/** How each mode is started again, with the same state, against the same topic. */
function starter(mode: RestartMode, kafka: BenchKafka, topic: string, dir: string, path: string): () => Started {
  if (mode === 'rsyslog imfile') {
    const work = join(dir, 'rsyslog-work')
    mkdirSync(work)
    const conf = join(dir, 'rsyslog.conf')
    writeFileSync(conf, rsyslogConfig(work, { path }, kafka.brokers, topic, `PersistStateInterval="${PERSIST_LINES}"`))
    const pid = join(dir, 'rsyslogd.pid')
    return () => {
      // A SIGKILLed rsyslogd leaves its pid file behind.
      rmSync(pid, { force: true })
      return start(RSYSLOGD, ['-n', '-f', conf, '-i', pid])
    }
  }
  const args = [
    'produce',
    '--brokers',
    kafka.brokers,
    '--topic',
    topic,
    '--source',
    'file',
    '--kind',
    'syslog',
    '--file',
    path,
    '--follow',
    '--state-dir',
    join(dir, 'state'),
    '--codec',
    CODEC,
    '--quiet',
    '-X',
    `linger.ms=${LINGER_MS}`,
    ...(mode === 'squeeze --exactly-once' ? ['--exactly-once', '--positions-topic', `${topic}-positions`] : [])
  ]
  return () => start(CLI, args, { SQUEEZE_NODE: process.execPath })
}

/** Resolves once the topic holds more than `count` records; rejects when the peer exits first or takes too long. */
async function shipped(kafka: BenchKafka, topic: string, count: number, peer: Started, mode: string): Promise<void> {
  let exited = false
  void peer.exited.then(() => (exited = true))
  const until = Date.now() + START_TIMEOUT_MS
  while ((await kafka.recordCount(topic)) < count + SHIPPED_FIRST) {
    if (exited || Date.now() > until)
      throw new Error(
        `${mode}: ${exited ? 'exited' : 'shipped nothing'} after a restart:\n${peer.output().slice(-3000)}`
      )
    await sleep(50)
  }
}

/** The values kcat reads with read_committed, in offset order (one partition). */
async function readBack(kafka: BenchKafka, topic: string): Promise<string[]> {
  const run = await runChild(
    'kcat',
    ['-C', '-b', kafka.brokers, '-t', topic, '-e', '-q', '-X', 'isolation.level=read_committed', '-f', '%s\\n'],
    { timeoutMs: 300_000 }
  )
  must(run, `kcat -C ${topic}`)
  return run.stdout.split('\n').filter((l) => l !== '')
}

/** Lost, duplicated and out-of-order lines among `values` of a file of `lines` numbered lines. */
export function tally(
  values: readonly string[],
  lines: number
): Pick<RestartRow, 'lost' | 'duplicated' | 'outOfOrder'> {
  const seen = new Uint8Array(lines)
  let duplicated = 0
  let outOfOrder = 0
  let highest = -1
  for (const value of values) {
    const n = Number(/ seq (\d+) /.exec(value)?.[1] ?? NaN)
    if (!Number.isInteger(n) || n < 0 || n >= lines) throw new Error(`not a line of the bench's file: ${value}`)
    if (seen[n] === 1) {
      duplicated++
      continue
    }
    seen[n] = 1
    if (n < highest) outOfOrder++
    highest = Math.max(highest, n)
  }
  return { lost: seen.reduce((sum, s) => sum + (1 - s), 0), duplicated, outOfOrder }
}

async function runMode(
  kafka: BenchKafka,
  mode: RestartMode,
  opts: { lines: number; kills: number; seed: number },
  log: (s: string) => void
): Promise<RestartRow> {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-bench-restart-'))
  const path = join(dir, 'app.log')
  const topic = await kafka.createTopic(`bench-restart-${RESTART_MODES.indexOf(mode)}-${Date.now()}`, 1)
  const rng = new Rng(opts.seed)
  const first = Math.floor(opts.lines / 4)
  appendLines(path, 0, first)
  let written = first
  // The rest in as many shares as there are starts, each released once the start before it was killed and
  // written over about a second: every start has new lines to ship, so every kill comes while lines are shipped.
  const share = (k: number): number => Math.min(opts.lines, first + Math.ceil(((opts.lines - first) * k) / opts.kills))
  let allowed = share(1)
  const step = Math.max(1, Math.ceil((opts.lines - first) / opts.kills / 10))
  const writer = setInterval(() => {
    const next = Math.min(allowed, written + step)
    if (next > written) appendLines(path, written, next)
    written = next
  }, 100)
  const startedAt = Date.now()
  const restart = starter(mode, kafka, topic, dir, path)
  let peer: Started | undefined
  try {
    for (let k = 0; k < opts.kills; k++) {
      const before = await kafka.recordCount(topic)
      peer = restart()
      await shipped(kafka, topic, before, peer, mode)
      await sleep(rng.float() * KILL_WINDOW_MS)
      peer.child.kill('SIGKILL')
      await peer.exited
      allowed = share(k + 2)
      log(
        `restart ${mode}: kill ${k + 1}/${opts.kills}, ${await kafka.recordCount(topic)} records, ` +
          `${written} lines written`
      )
    }
    peer = restart()
    let count = -1
    let changedAt = Date.now()
    let lastAt = Date.now()
    for (;;) {
      const now = await kafka.recordCount(topic)
      if (now !== count) {
        count = now
        changedAt = Date.now()
        lastAt = changedAt
      }
      if (written >= opts.lines && Date.now() - changedAt >= SETTLE_MS) break
      if (Date.now() - changedAt > START_TIMEOUT_MS)
        throw new Error(`${mode}: stuck at ${count} records:\n${peer.output().slice(-3000)}`)
      await sleep(100)
    }
    peer.child.kill('SIGTERM')
    await Promise.race([peer.exited, sleep(10_000).then(() => peer?.child.kill('SIGKILL'))])
    const values = await readBack(kafka, topic)
    const row = { mode, lines: opts.lines, kills: opts.kills, records: values.length, ...tally(values, opts.lines) }
    return { ...row, seconds: (lastAt - startedAt) / 1000 }
  } finally {
    clearInterval(writer)
    if (peer !== undefined && peer.child.exitCode === null && peer.child.signalCode === null) {
      peer.child.kill('SIGKILL')
      await peer.exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Every mode once, on the same file and kill points (the same seed). */
export async function restartBench(kafka: BenchKafka, dir: string, log: (s: string) => void): Promise<RestartResult> {
  const lines = envInt('BENCH_RESTART_LINES', 200_000)
  const kills = envInt('BENCH_RESTART_KILLS', 10)
  const seed = envInt('BENCH_RESTART_SEED', 32)
  checkRsyslog(dir, { path: join(dir, 'restart-check.log') }, kafka.brokers)
  const startLoad = loadavg()[0] as number
  const rows: RestartRow[] = []
  for (const mode of RESTART_MODES) {
    log(`restart: ${mode} (load ${loadavg()[0]?.toFixed(1)})`)
    rows.push(await runMode(kafka, mode, { lines, kills, seed }, log))
    await kafka.deleteCreatedTopics()
  }
  return { lines, kills, seed, load: { start: startLoad, end: loadavg()[0] as number }, rows }
}

export function restartTitle(result: RestartResult): string {
  return (
    `Restarts: ${result.lines} lines, the file growing, ${result.kills} SIGKILLs at seeded points ` +
    `(seed ${result.seed}) ` +
    `(load average ${result.load.start.toFixed(1)} -> ${result.load.end.toFixed(1)} on the 2 cores)`
  )
}

export function restartTable(result: RestartResult): string {
  const method =
    `Method: one topic partition, ${CODEC}; each start is SIGKILLed a seeded 0-${KILL_WINDOW_MS / 1000} s after it ` +
    `shipped ${SHIPPED_FIRST} records, then started again; the last start runs until the topic is still for ` +
    `${SETTLE_MS / 1000} s. Read back with kcat (isolation.level=read_committed); out of order = a line's first copy ` +
    `after a higher line. squeeze saves positions as Kafka acknowledges them (--exactly-once commits them every ` +
    `second); rsyslog: imfile (inotify, state files in ` +
    `its work directory, PersistStateInterval=${PERSIST_LINES}) into omkafka.`
  return `${method}\n\n${table(
    ['shipper', 'lines', 'records read', 'lost', 'duplicated', 'out of order', 'seconds'],
    result.rows.map((r) => [
      r.mode,
      fmt(r.lines),
      fmt(r.records),
      fmt(r.lost),
      fmt(r.duplicated),
      fmt(r.outOfOrder),
      fmt(r.seconds, 1)
    ])
  )}`
}

if (import.meta.url === `file://${process.argv[1]}`)
  await runSectionAlone('restart', restartBench, (r) => ({ title: restartTitle(r), table: restartTable(r) }))
