import { writeFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { CODEC_NAMES, isCodecName, parseCodecSpec, formatCodecSpec, resolveCodecSpec, type CodecSpec } from '../../lib/codecs/index.js'
import { oneOf, parseCli, parseInteger } from '../../lib/config/cli.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { createGenerator } from '../../lib/generators/index.js'
import { DEFAULT_START_MS } from '../../lib/generators/log-generator.js'
import type { OutgoingRecord } from '../../lib/protocol/record.js'
import { formatBytes, formatNumber, renderTable } from '../../lib/report/table.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { readFileLines } from '../../lib/sources/file-source.js'
import {
  buildBatches, DEFAULT_BATCH_SIZES, defaultLevels, sweepBatchSizes, sweepCodecs, type BatchSizeResult, type LevelResult
} from '../../lib/bench-sweep/codec-sweep.js'

export const BENCH_HELP = `squeeze bench: an lzbench-style sweep of every codec and level over real Kafka record batches, in memory.

Usage: squeeze bench (--file PATH --kind KIND | --generate KIND) [options]

Input:
  --file PATH            log file; lines are parsed by --kind (access logs become Cap'n Proto HTTP records)
  --kind KIND            with --file: ${LOG_KINDS.join(', ')} (default http)
  --generate KIND        generate seeded synthetic records of this kind instead
  --records N            generated records (default 50000); with --file, read at most N lines
  --seed N               generator seed (default 1)
Sweep:
  --batch-bytes N        batch.size to cut batches at (default 1048576)
  --codecs LIST          comma-separated, e.g. zstd,lz4:1,gzip:6; a bare name sweeps its levels
                         (default none,gzip,snappy,lz4,zstd: gzip 1..9, lz4 1..12, zstd -5,-1,1..19)
  --ultra                also sweep zstd 20..22
  --runs N               timed runs per level, median reported (default 3)
  --json FILE            also write the results as JSON
  -h, --help             this help

MB/s is 10^6 bytes of uncompressed records per second of process CPU time, so it reads per core.
Every level's round trip is checked byte for byte. The batch-size table shows zstd:3 and lz4:1 at
16 KiB..4 MiB batches. Exit codes: 0 done; 1 runtime failure (a round trip mismatch); 2 invalid arguments.`

const OPTIONS = {
  file: { type: 'string' },
  kind: { type: 'string' },
  generate: { type: 'string' },
  records: { type: 'string' },
  seed: { type: 'string' },
  'batch-bytes': { type: 'string' },
  codecs: { type: 'string' },
  ultra: { type: 'boolean' },
  runs: { type: 'string' },
  json: { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

/** Whole passes of fast codecs over small inputs would otherwise be timed at the CPU clock's resolution. */
const MIN_RUN_CPU_SECONDS = 0.05

interface BenchInput {
  readonly description: string
  readonly records: OutgoingRecord[]
  readonly linesNotParsed: number
}

export async function benchMain(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCli(argv, OPTIONS)
  if (values.help === true) {
    process.stdout.write(`${BENCH_HELP}\n`)
    return 0
  }
  if (positionals.length > 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `unexpected argument "${positionals[0]}"; see --help`)
  if ((values.file === undefined) === (values.generate === undefined)) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'give either --file PATH (with --kind) or --generate KIND; see --help')
  }
  if (values.generate !== undefined && values.kind !== undefined) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--kind goes with --file; --generate takes the kind itself (--generate http)')
  }
  const kind = values.generate !== undefined ? oneOf(values.generate, 'generate', LOG_KINDS, 'http' as LogKind) : oneOf(values.kind, 'kind', LOG_KINDS, 'http' as LogKind)
  const records = parseInteger(values.records, 'records', 1)
  const seed = parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 1
  const batchBytes = parseInteger(values['batch-bytes'], 'batch-bytes', 1024, 256 * 1024 * 1024) ?? 1024 * 1024
  const runs = parseInteger(values.runs, 'runs', 1, 100) ?? 3
  const specs = parseCodecList(values.codecs, values.ultra === true)

  const input = values.file !== undefined ? await readInput(values.file, kind, records) : generateInput(kind, seed, records ?? 50_000)
  if (input.records.length === 0) throw new SqueezeError(ErrorCodes.SOURCE, `no records to benchmark: ${input.description} gave none`)
  const batches = buildBatches(input.records, batchBytes)
  const levels = sweepCodecs(batches, specs, { runs, minRunCpuSeconds: MIN_RUN_CPU_SECONDS })
  const batchSizes = sweepBatchSizes(input.records, DEFAULT_BATCH_SIZES)

  process.stdout.write(`${renderBench(input, batches.sections.length, batchBytes, runs, levels, batchSizes)}\n`)
  if (values.json !== undefined) {
    const document = { generatedAt: new Date().toISOString(), input: { description: input.description, records: input.records.length, linesNotParsed: input.linesNotParsed }, settings: { batchBytes, runs, batches: batches.sections.length }, levels, batchSizes }
    // JSON has no Infinity; a level too fast to time reports null rather than a made-up figure.
    await writeFile(values.json, `${JSON.stringify(document, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`)
  }
  return 0
}

/** `zstd,lz4:1` -> zstd's default levels, then lz4 level 1; duplicates dropped, order kept. */
export function parseCodecList(list: string | undefined, ultra: boolean): CodecSpec[] {
  const items = list === undefined ? [...CODEC_NAMES] : list.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (items.length === 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--codecs is empty: use e.g. zstd,lz4:1 from ${CODEC_NAMES.join(', ')}`)
  const specs: CodecSpec[] = []
  for (const item of items) {
    if (item.includes(':')) {
      specs.push(parseCodecSpec(item))
      continue
    }
    const name = item.toLowerCase()
    if (!isCodecName(name)) resolveCodecSpec(name) // throws the one-line "unknown codec ... use one of" error
    else specs.push(...defaultLevels(name, ultra))
  }
  const unique = new Map<string, CodecSpec>()
  for (const spec of specs) if (!unique.has(formatCodecSpec(spec))) unique.set(formatCodecSpec(spec), spec)
  return [...unique.values()]
}

async function readInput(path: string, kind: LogKind, maxLines: number | undefined): Promise<BenchInput> {
  const format = formatFor(kind)
  const records: OutgoingRecord[] = []
  let lines = 0
  let linesNotParsed = 0
  for await (const item of readFileLines(path, { follow: false })) {
    if (item.kind !== 'line' || item.line === '') continue
    if (maxLines !== undefined && lines >= maxLines) break
    lines++
    try {
      // A steady 1 ms clock: the file's own times are inside the value, and batch deltas stay realistic and reproducible.
      records.push({ key: null, value: format.encodeLine(item.line), timestamp: DEFAULT_START_MS + records.length })
    } catch (err) {
      if (!(err instanceof SqueezeError && err.code === ErrorCodes.PARSE_LINE)) throw err
      linesNotParsed++
    }
  }
  return { description: `${path} (${kind}, ${lines} lines)`, records, linesNotParsed }
}

function generateInput(kind: LogKind, seed: number, count: number): BenchInput {
  const generator = createGenerator(kind, { seed })
  const records: OutgoingRecord[] = []
  for (let i = 0; i < count; i++) {
    const r = generator.next()
    records.push({ key: r.key, value: r.value, timestamp: r.timestampMs })
  }
  return { description: `generated ${kind} (seed ${seed})`, records, linesNotParsed: 0 }
}

function renderBench(input: BenchInput, batches: number, batchBytes: number, runs: number, levels: readonly LevelResult[], sizes: readonly BatchSizeResult[]): string {
  const first = levels[0]
  const uncompressed = first === undefined ? 0 : first.uncompressedBytes
  const heading = `${input.description}: ${input.records.length} records` +
    (input.linesNotParsed > 0 ? ` (${input.linesNotParsed} line${input.linesNotParsed === 1 ? '' : 's'} not parsed, skipped)` : '') +
    `, ${batches} batches of <= ${formatBytes(batchBytes)}, ${formatBytes(uncompressed)} uncompressed; median of ${runs} run${runs === 1 ? '' : 's'}, MB/s per core of CPU time`
  const levelTable = renderTable(
    ['codec', 'compressed', 'ratio', 'compress MB/s', 'decompress MB/s'],
    levels.map((l) => [l.target, formatBytes(l.compressedBytes), `${formatNumber(l.ratio, 3)}x`, formatNumber(l.compressMBPerSecond, 1), formatNumber(l.decompressMBPerSecond, 1)])
  )
  const targets = Object.keys(sizes[0]?.ratios ?? {})
  const sizeTable = renderTable(
    ['batch size', 'batches', 'rec/batch', ...targets.map((t) => `${t} ratio`)],
    sizes.map((s) => [formatBytes(s.batchBytes), String(s.batches), formatNumber(s.meanRecordsPerBatch, 0), ...targets.map((t) => `${formatNumber(s.ratios[t] ?? Number.NaN, 3)}x`)])
  )
  return [heading, '', levelTable, '', 'ratio by batch size (batch.size):', '', sizeTable].join('\n')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCommand(() => benchMain(process.argv.slice(2)))
