import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchRuns, envInt, fmt, fmtRatio, gb, median, must, ratio, runChild, table, writeJson, type ChildRun } from './lib/harness.js'
import { openBenchKafka, PARTITIONS, type BenchKafka } from './lib/kafka-env.js'
import { corpusLines } from '../test/helpers/corpus.js'
import { FIXTURES } from './parse.js'

/**
 * What a user runs, end to end: `squeeze produce --source file` on each format's corpus file replayed to
 * BENCH_E2E_LINES lines (parse, encode, batch, compress, acknowledged), next to `kcat -P -l` shipping the same
 * file as raw lines to the same broker with the same codec, linger.ms and batch.size: no parsing, the upper bound.
 *   node dist/bench/end-to-end.js [out.json]      Env: BENCH_RUNS (3), BENCH_E2E_LINES (200000), KAFKA_BROKERS
 * Lines/s = lines / wall of the whole process (start-up and final flush included, for both); CPU s per GB of the
 * file; peak RSS; stored ratio = file bytes / bytes on the broker's disk. Medians of BENCH_RUNS, with min-max.
 */
const CLI = fileURLToPath(new URL('../services/cli/main.js', import.meta.url))
const CODEC = process.env['BENCH_E2E_CODEC'] ?? 'zstd:3'
const LINGER_MS = 100
const BATCH_BYTES = 1_048_576

interface Input {
  readonly kind: string
  readonly path: string
  readonly lines: number
  readonly bytes: number
}

interface Sample {
  readonly linesPerSecond: number
  readonly cpuSecondsPerGb: number
  readonly maxRssMb: number
  readonly storedRatio: number
}

interface Row {
  readonly kind: string
  readonly peer: 'squeeze' | 'kcat'
  readonly lines: number
  readonly bytes: number
  readonly median: Sample
  readonly min: Sample
  readonly max: Sample
}

const log = (s: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`)
}

/** The corpus file of `kind` replayed in order until `lines` lines. */
function writeInput(dir: string, kind: string, file: string, lines: number): Input {
  const source = corpusLines(file).filter((l) => l !== '')
  const out = Array.from({ length: lines }, (_, i) => source[i % source.length] as string)
  const path = join(dir, `${kind}.log`)
  writeFileSync(path, `${out.join('\n')}\n`)
  return { kind, path, lines, bytes: statSync(path).size }
}

function squeezeArgs(kafka: BenchKafka, topic: string, input: Input): string[] {
  return [CLI, 'produce', '--brokers', kafka.brokers, '--topic', topic, '--kind', input.kind, '--source', 'file', '--file', input.path,
    '--codec', CODEC, '-X', `linger.ms=${LINGER_MS}`, '-X', `batch.size=${BATCH_BYTES}`]
}

function kcatArgs(kafka: BenchKafka, topic: string, input: Input): string[] {
  const [codec, level] = CODEC.split(':')
  return ['-P', '-b', kafka.brokers, '-t', topic, '-z', codec as string, '-X', `compression.level=${level ?? -1}`, '-X', `linger.ms=${LINGER_MS}`,
    '-X', `batch.size=${BATCH_BYTES}`, '-X', 'batch.num.messages=1000000', '-X', 'enable.idempotence=true', '-l', input.path]
}

async function sample(kafka: BenchKafka, input: Input, peer: Row['peer'], round: number): Promise<Sample> {
  const topic = await kafka.createTopic(`bench-e2e-${peer}-${input.kind}-${round}-${Date.now()}`, PARTITIONS)
  const run: ChildRun = peer === 'squeeze'
    ? must(await runChild(process.execPath, squeezeArgs(kafka, topic, input), { timeoutMs: 600_000 }), `squeeze produce ${input.kind}`)
    : must(await runChild('kcat', kcatArgs(kafka, topic, input), { timeoutMs: 600_000 }), `kcat -P ${input.kind}`)
  const stored = await kafka.storedBytes(topic)
  return { linesPerSecond: input.lines / run.wallSeconds, cpuSecondsPerGb: run.cpuSeconds / gb(input.bytes), maxRssMb: run.maxRssMb, storedRatio: ratio(input.bytes, stored) }
}

function summarise(samples: readonly Sample[], pick: (s: Sample) => number, how: (values: number[]) => number): number {
  return how(samples.map(pick))
}

function row(input: Input, peer: Row['peer'], samples: readonly Sample[]): Row {
  const at = (how: (values: number[]) => number): Sample => ({
    linesPerSecond: summarise(samples, (s) => s.linesPerSecond, how),
    cpuSecondsPerGb: summarise(samples, (s) => s.cpuSecondsPerGb, how),
    maxRssMb: summarise(samples, (s) => s.maxRssMb, how),
    storedRatio: summarise(samples, (s) => s.storedRatio, how)
  })
  return { kind: input.kind, peer, lines: input.lines, bytes: input.bytes, median: at(median), min: at((v) => Math.min(...v)), max: at((v) => Math.max(...v)) }
}

async function main(): Promise<void> {
  const lines = envInt('BENCH_E2E_LINES', 200_000)
  const runs = benchRuns()
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-bench-e2e-'))
  const kafka = await openBenchKafka()
  try {
    const inputs = FIXTURES.map(({ kind, file }) => writeInput(dir, kind, file, lines))
    const samples = new Map<string, Sample[]>()
    for (let round = 0; round < runs; round++) {
      // Peers interleaved per round, so a load spike on the shared machine spreads over all of them.
      for (const input of inputs) {
        for (const peer of ['squeeze', 'kcat'] as const) {
          log(`round ${round + 1}/${runs}: ${peer} ${input.kind}`)
          const key = `${peer} ${input.kind}`
          samples.set(key, [...(samples.get(key) ?? []), await sample(kafka, input, peer, round)])
          await kafka.deleteCreatedTopics()
        }
      }
    }
    const rows = inputs.flatMap((input) => (['squeeze', 'kcat'] as const).map((peer) => row(input, peer, samples.get(`${peer} ${input.kind}`) ?? [])))
    const kcatRate = (kind: string): number => rows.find((r) => r.peer === 'kcat' && r.kind === kind)?.median.linesPerSecond ?? NaN
    const spread = (r: Row): string => `${fmt(r.min.linesPerSecond / 1000)}-${fmt(r.max.linesPerSecond / 1000)}`
    process.stdout.write(`\n## End to end, ${lines} lines per file, ${CODEC}, medians of ${runs}\n\n${table(
      ['format', 'peer', 'MB', 'k lines/s', 'min-max', 'CPU s/GB', 'peak RSS MB', 'stored ratio', 'vs kcat'],
      rows.map((r) => [r.kind, r.peer, fmt(r.bytes / 1e6, 1), fmt(r.median.linesPerSecond / 1000), spread(r), fmt(r.median.cpuSecondsPerGb, 1), fmt(r.median.maxRssMb), fmt(r.median.storedRatio, 2),
        r.peer === 'squeeze' ? fmtRatio(r.median.linesPerSecond / kcatRate(r.kind)) : ''])
    )}\n`)
    writeJson(process.argv[2] ?? 'bench-end-to-end.json', { lines, codec: CODEC, runs, rows })
  } finally {
    await kafka.deleteCreatedTopics().catch(() => undefined)
    await kafka.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
