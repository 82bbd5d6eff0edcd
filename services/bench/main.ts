import { writeFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { generateBenchInput, readBenchInput } from '../../lib/bench-sweep/bench-input.js'
import { buildBatches, DEFAULT_BATCH_SIZES, parseCodecList, sweepBatchSizes, sweepCodecs } from '../../lib/bench-sweep/codec-sweep.js'
import { oneOf, parseCommandLine, parseInteger, serviceOptionsFrom } from '../../lib/config/cli.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { renderBench } from '../../lib/report/bench-table.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runOneShot } from '../../lib/service/run-service.js'

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

export async function benchMain(argv: readonly string[]): Promise<number> {
  const flags = parseCommandLine(argv, OPTIONS, BENCH_HELP)
  if (flags === undefined) return 0
  const { values, positionals } = flags
  return runOneShot({
    name: 'squeeze-bench',
    // No Kafka and no shutdown handlers: the sweep runs in memory, and Ctrl-C ends it at once.
    service: serviceOptionsFrom({ 'log-level': 'warn' }),
    configure: () => {
      if (positionals.length > 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `unexpected argument "${positionals[0]}"; see --help`)
      if ((values.file === undefined) === (values.generate === undefined)) {
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'give either --file PATH (with --kind) or --generate KIND; see --help')
      }
      if (values.generate !== undefined && values.kind !== undefined) {
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--kind goes with --file; --generate takes the kind itself (--generate http)')
      }
      return {
        kind: values.generate !== undefined ? oneOf(values.generate, 'generate', LOG_KINDS, 'http' as LogKind) : oneOf(values.kind, 'kind', LOG_KINDS, 'http' as LogKind),
        records: parseInteger(values.records, 'records', 1),
        seed: parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 1,
        batchBytes: parseInteger(values['batch-bytes'], 'batch-bytes', 1024, 256 * 1024 * 1024) ?? 1024 * 1024,
        runs: parseInteger(values.runs, 'runs', 1, 100) ?? 3,
        specs: parseCodecList(values.codecs, values.ultra === true)
      }
    },
    start: async (_ctx, { kind, records, seed, batchBytes, runs, specs }) => {
      const input = values.file !== undefined ? await readBenchInput(values.file, kind, records) : generateBenchInput(kind, seed, records ?? 50_000)
      if (input.records.length === 0) throw new SqueezeError(ErrorCodes.SOURCE, `no records to benchmark: ${input.description} gave none`)
      const batches = buildBatches(input.records, batchBytes)
      const levels = sweepCodecs(batches, specs, { runs, minRunCpuSeconds: MIN_RUN_CPU_SECONDS })
      const batchSizes = sweepBatchSizes(input.records, DEFAULT_BATCH_SIZES)
      process.stdout.write(`${renderBench(input, { batches: batches.sections.length, batchBytes, runs }, levels, batchSizes)}\n`)
      if (values.json !== undefined) {
        const document = { generatedAt: new Date().toISOString(), input: { description: input.description, records: input.records.length, linesNotParsed: input.linesNotParsed }, settings: { batchBytes, runs, batches: batches.sections.length }, levels, batchSizes }
        // JSON has no Infinity; a level too fast to time reports null rather than a made-up figure.
        await writeFile(values.json, `${JSON.stringify(document, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`)
      }
      return 0
    }
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCommand(() => benchMain(process.argv.slice(2)))
