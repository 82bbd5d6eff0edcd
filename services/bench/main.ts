import { writeFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { parseProperties } from '../../lib/config/producer-properties.js'
import { splitReadSettings } from '../../lib/config/read-properties.js'
import { sweepSourceOf, generateSweepInput, readSweepInput, type SweepSource } from '../../lib/sweep/sweep-input.js'
import {
  DEFAULT_BATCH_SIZES,
  parseCodecList,
  sweepBatchSizes,
  sweepCodecs,
  type BatchSizeResult,
  type LevelResult
} from '../../lib/sweep/codec-sweep.js'
import { readTopicSweepSource, type TopicSweepOptions } from '../../lib/sweep/topic-input.js'
import { parseSampleFlags } from '../../lib/compare/projection/sweep-flags.js'
import {
  CONNECTION_OPTIONS,
  connectionFrom,
  oneOf,
  parseCommandLine,
  parseInteger,
  serviceOptionsFrom
} from '../../lib/config/cli.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import {
  KIND_CHOICES,
  readFirstLines,
  resolveKind,
  wrongKindError,
  type KindChoice
} from '../../lib/formats/detect-kind.js'
import { LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { createCluster, createKafkaClient, type KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import type { Logger } from '../../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG } from '../../lib/producer/producer.js'
import { renderBench } from '../../lib/report/bench-table.js'
import { terminalLayout } from '../../lib/report/terminal.js'
import { Progress } from '../../lib/progress/progress.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runOneShot, type CommandContext } from '../../lib/service/run-service.js'

export const BENCH_HELP = `squeeze bench: an lzbench-style sweep of every codec and level over real Kafka record batches, in memory.

Usage: squeeze bench (--file PATH --kind KIND | --generate KIND) [options]
       squeeze bench --topic TOPIC --brokers HOST:PORT [--sample N|SIZE] [options]
         read-only: needs only Read and Describe on TOPIC

Input:
  --file PATH            log file; lines are parsed by --kind (access logs become Cap'n Proto HTTP records)
  --kind KIND            with --file: auto, ${LOG_KINDS.join(', ')} (default auto: detected from the first lines)
  --generate KIND        generate seeded synthetic records of this kind instead
  --topic TOPIC          pull real batches from a topic: nothing is written, no consumer group is used
  --records N            generated records (default 50000); with --file, read at most N lines; with --topic, at
                         most N records from the start
  --seed N               generator seed (default 1)
  --sample N|SIZE        with --topic: about N records, or SIZE of record bytes (64MiB), read as windows spread over
                         every partition's retained range, as compare --mode projection samples
  --sample-windows K     windows per partition for --sample (default 8)
  --linger-ms MS         with --topic: linger.ms replayed on the records' own timestamps (default ${DEFAULT_PRODUCER_CONFIG.lingerMs})
  --brokers HOST:PORT    with --topic (env KAFKA_BROKERS); TLS and SASL as in compare --help (--security-protocol,
                         --sasl-mechanism, --sasl-username, --sasl-password-file, --ssl-ca-file, --client-config, ...)
  --log-level LEVEL      trace|debug|info|warn|error|silent (default warn); logs are JSON on stderr
Sweep:
  --batch-bytes N        batch.size to cut batches at (default 1048576)
  --codecs LIST          comma-separated, e.g. zstd,lz4:1,gzip:6; a bare name sweeps its levels
                         (default none,gzip,snappy,lz4,zstd: gzip 1..9, lz4 1..12, zstd -5,-1,1..19)
  --ultra                also sweep zstd 20..22
  --runs N               timed runs per level, median reported (default 3)
  --json FILE            also write the results as JSON
  -X NAME=VALUE          with --topic: squeeze.max.batch.uncompressed.bytes, the most one batch read may decompress
                         to (default 128 MiB); a batch over it, or corrupt, is left out and counted in the input line
  --wide                 no limit on the printed report's width (default: the terminal's, else COLUMNS, else 100)
  --quiet                no progress line on stderr
  -h, --help             this help

A topic's records are batched as squeeze's producer batches them: per partition, batch.size on the uncompressed
batch, linger.ms on their timestamps. A file's are cut at batch.size alone, one stream on a steady 1 ms clock.
MB/s is 10^6 bytes of uncompressed records per second of process CPU time, so it reads per core.
Every level's round trip is checked byte for byte. The batch-size table shows zstd:3 and lz4:1 at
16 KiB..4 MiB batches. Exit codes: 0 done; 1 runtime failure (a round trip mismatch, a missing topic, no broker);
2 invalid arguments.`

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  file: { type: 'string' },
  kind: { type: 'string' },
  generate: { type: 'string' },
  topic: { type: 'string' },
  records: { type: 'string' },
  seed: { type: 'string' },
  sample: { type: 'string' },
  'sample-windows': { type: 'string' },
  'linger-ms': { type: 'string' },
  'batch-bytes': { type: 'string' },
  codecs: { type: 'string' },
  ultra: { type: 'boolean' },
  runs: { type: 'string' },
  json: { type: 'string' },
  X: { type: 'string', short: 'X', multiple: true },
  wide: { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' }
} as const

/** Whole passes of fast codecs over small inputs would otherwise be timed at the CPU clock's resolution. */
const MIN_RUN_CPU_SECONDS = 0.05

export async function benchMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const flags = parseCommandLine(argv, OPTIONS, BENCH_HELP)
  if (flags === undefined) return 0
  const { values, positionals } = flags
  return runOneShot({
    name: 'squeeze-bench',
    // No shutdown handlers: the sweep runs in memory, and Ctrl-C ends it at once.
    service: serviceOptionsFrom({ 'log-level': values['log-level'] ?? 'warn' }),
    configure: (log) => benchSettings(values, positionals, env, log),
    start: async ({ log, connect }, config) => {
      const { records, seed, batchBytes, runs, specs, topic, connection } = config
      const progress = new Progress({ stream: process.stderr, log, quiet: values.quiet === true })
      const sample = values.file === undefined ? [] : await readFirstLines(values.file)
      const resolved =
        values.file === undefined ? { kind: config.kind as LogKind } : resolveKind(config.kind, sample, values.file)
      if (resolved.note !== undefined) process.stderr.write(`${resolved.note}\n`)
      const { kind } = resolved
      progress.report({ phase: topic !== undefined ? `reading ${topic.name}` : 'reading the input' })
      const source =
        topic !== undefined && connection !== undefined
          ? await readTopic(
              connection,
              {
                topic: topic.name,
                brokers: connection.brokers,
                lingerMs: topic.lingerMs,
                read: topic.read,
                ...(topic.sample === undefined ? {} : { sample: topic.sample }),
                ...(records === undefined ? {} : { maxRecords: records })
              },
              log,
              connect
            )
          : sweepSourceOf(
              values.file !== undefined
                ? await readSweepInput(values.file, kind, records)
                : generateSweepInput(kind, seed, records ?? 50_000)
            )
      const batches = source.batchesAt(batchBytes)
      if (batches.records === 0 && values.file !== undefined)
        throw wrongKindError(kind, 0, source.linesNotParsed, sample)
      if (batches.records === 0)
        throw new SqueezeError(ErrorCodes.SOURCE, `no records to benchmark: ${source.description} gave none`)
      const levels = sweepCodecs(batches, specs, {
        runs,
        minRunCpuSeconds: MIN_RUN_CPU_SECONDS,
        onLevel: (done, total, target) =>
          progress.report({ phase: 'sweep', detail: target, done, total, unit: 'levels' })
      })
      progress.report({ phase: 'batch sizes' })
      const batchSizes = sweepBatchSizes((size) => source.batchesAt(size), DEFAULT_BATCH_SIZES)
      progress.done()
      const settings = { records: batches.records, batches: batches.sections.length, batchBytes, runs }
      process.stdout.write(
        `${renderBench(source, settings, levels, batchSizes, terminalLayout(process.stdout, values.wide === true))}\n`
      )
      if (values.json !== undefined) {
        const settings = { batchBytes, runs, ...(topic === undefined ? {} : { lingerMs: topic.lingerMs }) }
        await writeFile(values.json, benchJson(source, batches, settings, levels, batchSizes))
      }
      return 0
    }
  })
}

type Values = NonNullable<ReturnType<typeof parseCommandLine<typeof OPTIONS>>>['values']

/** Every flag checked once, before any input is read. */
function benchSettings(values: Values, positionals: readonly string[], env: NodeJS.ProcessEnv, log: Logger) {
  if (positionals.length > 0)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `unexpected argument "${positionals[0]}"; see --help`)
  if ([values.file, values.generate, values.topic].filter((v) => v !== undefined).length !== 1) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      'give one of --file PATH (with --kind), --generate KIND or --topic TOPIC (with --brokers); see --help'
    )
  }
  if (values.generate !== undefined && values.kind !== undefined) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      '--kind goes with --file; --generate takes the kind itself (--generate http)'
    )
  }
  const sample = parseSampleFlags(values)
  if (values.topic === undefined) {
    const misplaced = (['sample', 'sample-windows', 'linger-ms', 'brokers', 'X'] as const).filter(
      (flag) => values[flag] !== undefined
    )
    if (misplaced.length > 0)
      throw new SqueezeError(
        ErrorCodes.CONFIG_INVALID,
        `${misplaced.map((f) => `--${f}`).join(', ')} appl${misplaced.length === 1 ? 'ies' : 'y'} to --topic only`
      )
  }
  const records = parseInteger(values.records, 'records', 1)
  const { read, rest } = splitReadSettings(parseProperties(values.X ?? []))
  const unknown = Object.keys(rest)
  if (unknown.length > 0) {
    const named = `unknown setting${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `${named}: bench takes -X squeeze.max.batch.uncompressed.bytes only`
    )
  }
  if (sample !== undefined && records !== undefined)
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      'give either --sample (windows across the topic) or --records (the first N records), not both'
    )
  return {
    kind:
      values.generate !== undefined
        ? oneOf(values.generate, 'generate', LOG_KINDS, 'http' as LogKind)
        : oneOf<KindChoice>(values.kind, 'kind', KIND_CHOICES, 'auto'),
    records,
    seed: parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 1,
    batchBytes: parseInteger(values['batch-bytes'], 'batch-bytes', 1024, 256 * 1024 * 1024) ?? 1024 * 1024,
    runs: parseInteger(values.runs, 'runs', 1, 100) ?? 3,
    specs: parseCodecList(values.codecs, values.ultra === true),
    topic:
      values.topic === undefined
        ? undefined
        : {
            name: values.topic,
            ...(sample === undefined ? {} : { sample }),
            read,
            lingerMs: parseInteger(values['linger-ms'], 'linger-ms', 0, 3_600_000) ?? DEFAULT_PRODUCER_CONFIG.lingerMs
          },
    // Only a topic's sweep talks to a cluster.
    connection: values.topic === undefined ? undefined : connectionFrom(values, env, log)
  }
}

/** The --json document; JSON has no Infinity, so a level too fast to time reports null rather than a made-up figure. */
function benchJson(
  source: SweepSource,
  batches: { readonly records: number; readonly sections: readonly unknown[] },
  settings: { readonly batchBytes: number; readonly runs: number; readonly lingerMs?: number },
  levels: readonly LevelResult[],
  batchSizes: readonly BatchSizeResult[]
): string {
  const sampling = 'sampling' in source ? { sampling: source.sampling } : {}
  const document = {
    generatedAt: new Date().toISOString(),
    input: {
      description: source.description,
      records: batches.records,
      linesNotParsed: source.linesNotParsed,
      ...sampling
    },
    settings: {
      batchBytes: settings.batchBytes,
      runs: settings.runs,
      batches: batches.sections.length,
      ...(settings.lingerMs === undefined ? {} : { lingerMs: settings.lingerMs })
    },
    levels,
    batchSizes
  }
  return `${JSON.stringify(document, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`
}

/** The topic's batches, through clients that connect (a failure says why: reachability, TLS, credentials) and close here. */
async function readTopic(
  connection: KafkaConnectionConfig,
  options: TopicSweepOptions,
  log: Logger,
  connect: CommandContext['connect']
): Promise<Awaited<ReturnType<typeof readTopicSweepSource>>> {
  const admin = createKafkaClient(connection, log).admin()
  const cluster = createCluster(connection, log)
  try {
    await connect(admin.connect(), connection)
    await connect(cluster.connect(), connection)
    return await readTopicSweepSource({ admin, cluster, log }, options)
  } finally {
    await cluster.disconnect().catch(() => undefined)
    await admin.disconnect().catch(() => undefined)
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => benchMain(process.argv.slice(2)))
