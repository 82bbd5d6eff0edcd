import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { corpusLines } from '../test/helpers/corpus.js'
import { CODEC, squeezeArgs } from './end-to-end.js'
import { benchRuns, envInt, fmt, fmtRatio, median, must, ratio, roundOrder, runChild, table } from './lib/harness.js'
import { PARTITIONS, runSectionAlone, type BenchKafka } from './lib/kafka-env.js'
import { FIXTURES } from './parse.js'

/**
 * The shipper's cost: `produce --source file` on one file without read positions (the single-file path, what
 * shipping a file was before file sets) against the same file as a file set (a glob) with positions saved in
 * --state-dir (a fresh one per run, so the whole file is read), without and with the squeeze.source.file header
 * (the default; a header of the file's path on every record is bytes to compress and send), alternating,
 * BENCH_POSITIONS_RUNS rounds (at least 5) after a warm-up round, on each of BENCH_POSITIONS_KINDS' (http,syslog)
 * corpus files replayed to BENCH_E2E_LINES lines.
 *   node dist/bench/positions-rate.js [out.json]      (or `node dist/bench/run.js positions`)
 * Lines/s = lines / wall from spawn to exit (every line acknowledged); CPU s = the process's user+system.
 */
const CLI = fileURLToPath(new URL('../../bin/squeeze', import.meta.url))

export const POSITIONS_PEERS = ['single file', 'file set + positions', 'file set + positions + source header'] as const
type Peer = (typeof POSITIONS_PEERS)[number]

export interface PositionsRow {
  readonly kind: string
  readonly peer: Peer
  readonly lines: number
  readonly linesPerSecond: number
  readonly minLinesPerSecond: number
  readonly maxLinesPerSecond: number
  readonly cpuSeconds: number
}

export interface PositionsResult {
  readonly lines: number
  readonly runs: number
  readonly load: { readonly start: number; readonly end: number }
  readonly rows: PositionsRow[]
}

/** A file set's median lines/s (by default the one without source headers) over the single file's, for `kind`. */
export function positionsRatio(result: PositionsResult, kind: string, peer: Peer = 'file set + positions'): number {
  const rate = (p: Peer): number => result.rows.find((r) => r.kind === kind && r.peer === p)?.linesPerSecond ?? NaN
  return ratio(rate(peer), rate('single file'))
}

/** The single file as it is, or the file set of its folder with positions in `state`. */
function args(kafka: BenchKafka, topic: string, kind: string, file: string, peer: Peer, state: string): string[] {
  if (peer === 'single file') return squeezeArgs(kafka, topic, { kind, path: file })
  const header = peer === 'file set + positions' ? ['--no-source-header'] : []
  return [...squeezeArgs(kafka, topic, { kind, path: join(file, '..', '*.log') }), '--state-dir', state, ...header]
}

export async function positionsBench(
  kafka: BenchKafka,
  dir: string,
  log: (s: string) => void
): Promise<PositionsResult> {
  const lines = envInt('BENCH_E2E_LINES', 200_000)
  const runs = Math.max(5, envInt('BENCH_POSITIONS_RUNS', benchRuns()))
  const kinds = (process.env['BENCH_POSITIONS_KINDS'] ?? 'http,syslog').split(',')
  const start = loadavg()[0] as number
  const inputs = FIXTURES.filter((f) => kinds.includes(f.kind)).map(({ kind, file }) => {
    // A folder per file: the glob matches it alone.
    const folder = join(dir, `positions-${kind}`)
    mkdirSync(folder, { recursive: true })
    const source = corpusLines(file).filter((l) => l !== '')
    const path = join(folder, `${kind}.log`)
    writeFileSync(path, `${Array.from({ length: lines }, (_, i) => source[i % source.length]).join('\n')}\n`)
    return { kind, path, bytes: statSync(path).size }
  })
  const samples = new Map<string, Array<{ rate: number; cpu: number }>>()
  for (let round = -1; round < runs; round++) {
    for (const input of inputs) {
      for (const peer of roundOrder(POSITIONS_PEERS, Math.max(round, 0))) {
        const topic = await kafka.createTopic(`bench-positions-${input.kind}-${Date.now()}`, PARTITIONS)
        const state = join(dir, `state-${Date.now()}`)
        const run = must(
          await runChild(CLI, args(kafka, topic, input.kind, input.path, peer, state), {
            timeoutMs: 600_000,
            env: { SQUEEZE_NODE: process.execPath }
          }),
          `${peer} ${input.kind}`
        )
        rmSync(state, { recursive: true, force: true })
        await kafka.deleteCreatedTopics()
        const rate = lines / run.wallSeconds
        log(
          `positions ${round < 0 ? 'warm-up (not counted)' : `round ${round + 1}/${runs}`}: ${peer} ${input.kind} ` +
            `${(rate / 1000).toFixed(0)}k lines/s (load ${loadavg()[0]?.toFixed(1)})`
        )
        if (round < 0) continue
        const key = `${peer} ${input.kind}`
        samples.set(key, [...(samples.get(key) ?? []), { rate, cpu: run.cpuSeconds }])
      }
    }
  }
  const rows = inputs.flatMap(({ kind }) =>
    POSITIONS_PEERS.map((peer) => {
      const s = samples.get(`${peer} ${kind}`) ?? []
      const rates = s.map((x) => x.rate)
      return {
        kind,
        peer,
        lines,
        linesPerSecond: median(rates),
        minLinesPerSecond: Math.min(...rates),
        maxLinesPerSecond: Math.max(...rates),
        cpuSeconds: median(s.map((x) => x.cpu))
      }
    })
  )
  return { lines, runs, load: { start, end: loadavg()[0] as number }, rows }
}

export function positionsTitle(result: PositionsResult): string {
  return (
    `Shipping with read positions: file set + --state-dir vs the single-file path, ${result.lines} lines, ${CODEC}, ` +
    `medians of ${result.runs} alternating runs (load average ${result.load.start.toFixed(1)} -> ` +
    `${result.load.end.toFixed(1)} on the 2 cores)`
  )
}

export function positionsTable(result: PositionsResult): string {
  return table(
    ['format', 'path', 'k lines/s', 'min-max', 'CPU s', 'vs single file'],
    result.rows.map((r) => [
      r.kind,
      r.peer,
      fmt(r.linesPerSecond / 1000),
      `${fmt(r.minLinesPerSecond / 1000)}-${fmt(r.maxLinesPerSecond / 1000)}`,
      fmt(r.cpuSeconds, 2),
      r.peer === 'single file' ? '' : fmtRatio(positionsRatio(result, r.kind, r.peer))
    ])
  )
}

if (import.meta.url === `file://${process.argv[1]}`)
  await runSectionAlone('positions', positionsBench, (r) => ({ title: positionsTitle(r), table: positionsTable(r) }))
