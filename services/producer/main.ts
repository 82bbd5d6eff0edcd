import { glob, stat } from 'node:fs/promises'
import { hostname } from 'node:os'
import { pathToFileURL } from 'node:url'
import { formatCodecSpec, parseCodecSpec } from '../../lib/codecs/index.js'
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  connectionFrom,
  oneOf,
  parseCommandLine,
  parseInteger,
  requireString,
  serviceOptionsFrom
} from '../../lib/config/cli.js'
import { parseProperties, producerConfigFrom } from '../../lib/config/producer-properties.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import {
  DETECT_LINES,
  KIND_CHOICES,
  readFirstLines,
  resolveKind,
  type KindChoice
} from '../../lib/formats/detect-kind.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import type { Admin } from 'kafkajs'
import { createCluster, createKafkaClient, type KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import { BROKER_DEFAULT_REPLICATION_FACTOR, ensureTopic } from '../../lib/kafka/topics.js'
import { createDeliveryMetrics } from '../../lib/metrics/delivery-metrics.js'
import { createProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { createSourceMetrics, type SourceMetrics } from '../../lib/metrics/source-metrics.js'
import type { Logger } from '../../lib/log/logger.js'
import { peekLines } from '../../lib/pipeline/peek-lines.js'
import { produceLogs, type ParseErrorPolicy, type ProduceLogsSummary } from '../../lib/pipeline/produce-logs.js'
import { shipFiles } from '../../lib/pipeline/ship-files.js'
import {
  CRI_KIND,
  FileSet,
  isFileSet,
  parseFilePatterns,
  type FilePattern,
  type FilePosition
} from '../../lib/sources/file-set.js'
import { KafkaPositions } from '../../lib/sources/kafka-positions.js'
import { PositionStore, defaultStateDir, fileSetId } from '../../lib/sources/position-store.js'
import { shutdownDeadlineMs } from '../../lib/producer/config.js'
import { Producer, type ProducerStats } from '../../lib/producer/producer.js'
import { watchDelivery } from '../../lib/service/delivery-health.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runService } from '../../lib/service/run-service.js'
import { terminalLayout, wrapLines } from '../../lib/report/terminal.js'
import { Progress } from '../../lib/progress/progress.js'
import { readFileBatches, readFileChunks, readStdinBatches } from '../../lib/sources/file-source.js'
import { DEFAULT_MAX_LINE_BYTES } from '../../lib/sources/line-splitter.js'
import { parseRateSchedule } from '../../lib/sources/rate-schedule.js'
import type { LineChunk, SourceBatch, SourceItem } from '../../lib/sources/source.js'

export const PRODUCE_HELP = `squeeze produce: read or generate log records, batch them per partition, compress, send to Kafka.

Usage: squeeze produce --topic TOPIC [options]

Input:
  --source generate|file|stdin   where records come from (default generate)
  --kind KIND                    log kind: auto, ${LOG_KINDS.join(', ')} (default: auto for a file or stdin,
                                 detected from the first ${DETECT_LINES} lines; http for generate)
  --file PATH|GLOB|KIND:GLOB     with --source file, repeatable; access logs (combined format) become Cap'n Proto
                                 HTTP records; KIND:GLOB reads the files a glob matches as another kind, or
                                 cri (Kubernetes container logs: P parts joined, pod headers; docs/shipper.md)
  --follow                       keep reading the files as they grow and appear, across rotation (tail -F), with
                                 read positions saved once Kafka acknowledged their lines (see docs/shipper.md)
  --exclude GLOB                 leave out files a --file glob matches, repeatable
  --state-dir DIR                where read positions are kept (default $XDG_STATE_HOME/squeeze or
                                 ~/.local/state/squeeze); --no-state reads every file from its start each time
  --exactly-once                 with --follow: read positions go to --positions-topic in the same transaction as the
                                 records (transactional id squeeze-ship.HOST-DIGEST, see docs/shipper.md)
  --positions-topic TOPIC        compacted topic of read positions with --exactly-once, created if missing
                                 (default squeeze-positions)
  --no-source-header             records without the squeeze.source.file header (the file a line came from)
  --host-header                  records with a squeeze.source.host header (the host name)
  --host-name NAME               the host name for that header, the state file's and the transactional id's name
                                 (default: os.hostname(); a DaemonSet passes its node's name)
  --records N                    stop after N records (generate default 100000)
  --rate N                       generated records per second, stamped with the current time (default: as fast as
                                 possible, with modelled times ending now); N:S,M:T,... steps the rate: N a second
                                 for S seconds, then M for T, ... (the last rate holds after)
  --seed N                       generator seed (default 1): equal seeds give the same records, times aside
  --on-parse-error skip|raw      a line that does not parse is counted and skipped, or sent as raw text (default skip)
  --max-line-bytes N             file and stdin: a longer line is split into pieces of at most N bytes, one record
                                 each, counted in squeeze_source_lines_split_total (default 1048576)
  --quiet                        no progress on stderr (a line in place on a terminal, else a log line every 10 s)
Kafka:
  --topic TOPIC                  destination topic
  --codec CODEC[:LEVEL]          none, gzip[:1-9], snappy, lz4[:1-17], zstd[:-131072..22] (default zstd:3); LEVEL
                                 adaptive (zstd, gzip, lz4) picks it per batch from what compression keeps up with
  --create-partitions N          create the topic with N partitions (compression.type=producer) if missing
  --replication-factor N         replication factor of a topic it creates (default: the broker's default.replication.factor)
  -X NAME=VALUE                  producer setting by Kafka name, repeatable: linger.ms (100), batch.size (1048576),
                                 buffer.memory (33554432), max.request.size, acks (all), enable.idempotence (true),
                                 delivery.timeout.ms, request.timeout.ms, retry.backoff.ms, compression.type,
                                 compression.gzip.level, compression.lz4.level, compression.zstd.level,
                                 max.in.flight.requests.per.connection (5), squeeze.compression.threads (cores - 1),
                                 squeeze.compression.level.min / .max (adaptive's range: 1 and zstd 19, gzip 9,
                                 lz4 12), squeeze.compression.cpu.budget (CPU s per GiB: adaptive's highest
                                 level whose measured cost fits)
${COMMON_HELP}

Exit codes: 0 all records delivered; 1 runtime failure or undelivered records; 2 invalid arguments.`

const OPTIONS = {
  ...COMMON_OPTIONS,
  topic: { type: 'string' },
  source: { type: 'string' },
  kind: { type: 'string' },
  file: { type: 'string', multiple: true },
  follow: { type: 'boolean' },
  exclude: { type: 'string', multiple: true },
  'state-dir': { type: 'string' },
  'no-state': { type: 'boolean' },
  'no-source-header': { type: 'boolean' },
  'exactly-once': { type: 'boolean' },
  'positions-topic': { type: 'string' },
  'host-header': { type: 'boolean' },
  'host-name': { type: 'string' },
  records: { type: 'string' },
  rate: { type: 'string' },
  seed: { type: 'string' },
  'on-parse-error': { type: 'string' },
  'max-line-bytes': { type: 'string' },
  quiet: { type: 'boolean' },
  codec: { type: 'string' },
  'create-partitions': { type: 'string' },
  'replication-factor': { type: 'string' },
  X: { type: 'string', short: 'X', multiple: true }
} as const

export async function produceMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const flags = parseCommandLine(argv, OPTIONS, PRODUCE_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  // Every setting is validated before anything connects (runService's configure).
  const topic = requireString(values.topic, 'topic', 'name the destination topic')
  const service = serviceOptionsFrom(values)
  return runService({
    name: 'squeeze-producer',
    service,
    configure: (log) => {
      const connection = connectionFrom(values, env, log)
      const codec = values.codec === undefined ? undefined : parseCodecSpec(values.codec)
      const warn = (message: string): void => log.warn(message)
      const producerConfig = producerConfigFrom(parseProperties(values.X ?? []), codec, {}, warn)
      const sourceKind = oneOf(values.source, 'source', ['generate', 'file', 'stdin'] as const, 'generate')
      const files = values.file ?? []
      const settings = {
        connection,
        producerConfig,
        sourceKind,
        kind: oneOf<KindChoice>(values.kind, 'kind', KIND_CHOICES, sourceKind === 'generate' ? 'http' : 'auto'),
        records: parseInteger(values.records, 'records', 1) ?? (sourceKind === 'generate' ? 100_000 : undefined),
        rate: values.rate === undefined ? undefined : parseRateSchedule(values.rate),
        seed: parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 1,
        maxLineBytes: parseInteger(values['max-line-bytes'], 'max-line-bytes', 64, 2 ** 28) ?? DEFAULT_MAX_LINE_BYTES,
        onParseError: oneOf(values['on-parse-error'], 'on-parse-error', ['skip', 'raw'] as const, 'skip'),
        createPartitions: parseInteger(values['create-partitions'], 'create-partitions', 1, 10000),
        replicationFactor: parseInteger(values['replication-factor'], 'replication-factor', 1, 100),
        shutdownTimeoutMs: shutdownDeadlineMs(producerConfig)
      }
      const invalid = (message: string): SqueezeError => new SqueezeError(ErrorCodes.CONFIG_INVALID, message)
      if (sourceKind === 'file' && files.length === 0) throw invalid('missing --file: --source file needs a path')
      if (sourceKind === 'generate' && settings.kind === 'auto')
        throw invalid('--kind auto applies to a file or stdin: name the kind to generate')
      const shipper = sourceKind === 'file' && (values.follow === true || isFileSet(files, SHIPPER_KINDS))
      if (shipper && settings.records !== undefined)
        throw invalid('--records does not apply to followed files or a file set')
      const exactlyOnce = values['exactly-once'] === true
      if (exactlyOnce && !shipper) throw invalid('--exactly-once needs --source file with --follow or a file set')
      const patterns = parseFilePatterns(files, SHIPPER_KINDS, settings.kind)
      const host = values['host-name'] ?? hostname()
      const fileSet = fileSetId(
        host,
        topic,
        patterns.map((p) => `${p.kind}:${p.glob}`)
      )
      return { ...settings, shipper, exactlyOnce, patterns, fileSet, host, transactionalId: `squeeze-ship.${fileSet}` }
    },
    start: async ({ log, registry, signal, waitForCluster, connect, ready, reportAtDeadline }, configured) => {
      const { connection, producerConfig, sourceKind, kind: kindChoice, records, rate, seed, onParseError } = configured
      const { createPartitions, replicationFactor } = configured
      const sourceMetrics = createSourceMetrics(registry)
      let linesSplit = 0
      const onLineSplit = (): void => {
        linesSplit++
        sourceMetrics.lineSplit()
      }
      const lines = { maxLineBytes: configured.maxLineBytes, onLineSplit, signal }
      // A file's or stdin's kind is checked against (or, for auto, read from) its first lines before anything connects.
      // Stdin is peeked only to detect its kind: with --kind given, a slow pipe's first lines go out as they come.
      const file = values.file?.[0] as string
      const stdin =
        sourceKind === 'stdin' && kindChoice === 'auto'
          ? await peekLines(eachItem(readStdinBatches(lines)), DETECT_LINES)
          : undefined
      const settings = { ...configured, patterns: await resolvePatternKinds(configured.patterns, log) }
      const sample = sourceKind === 'file' && !settings.shipper ? await readFirstLines(file) : (stdin?.lines ?? [])
      const resolved =
        sourceKind === 'generate' || settings.shipper
          ? { kind: (kindChoice === 'auto' ? 'http' : kindChoice) as LogKind }
          : resolveKind(kindChoice, sample, sourceKind === 'file' ? file : 'stdin')
      if (resolved.note !== undefined) log.info({ kind: resolved.kind }, resolved.note)
      const { kind } = resolved
      const producer = new Producer(producerConfig, {
        cluster: createCluster(connection, log),
        log: log.child({ component: 'producer' }),
        metrics: createProducerMetrics(registry),
        ...(settings.exactlyOnce ? { transactionalId: settings.transactionalId } : {})
      })
      // A file read once says how much is coming: a large one gets its compression thread at once, a small one none.
      if (sourceKind === 'file' && !settings.shipper) {
        const size = await stat(file).then(
          (s) => s.size,
          () => undefined
        )
        if (size !== undefined) producer.expectInputBytes(size)
      }
      const delivery = watchDelivery(producer, { metrics: createDeliveryMetrics(registry), log })
      reportAtDeadline(() => deliveryOutcome(producer.snapshot()))
      try {
        // The source is read and parsed while this connects; produceLogs holds the records until it is done.
        const connected = waitForCluster(async () => {
          if (createPartitions !== undefined) {
            const admin = createKafkaClient(connection, log).admin()
            await connect(admin.connect())
            try {
              await ensureTopic(admin, topic, createPartitions, replicationFactor ?? BROKER_DEFAULT_REPLICATION_FACTOR)
            } catch (err) {
              if (err instanceof SqueezeError && err.code === ErrorCodes.TOPIC_REFUSED) delivery.refused(topic, err)
              throw err
            } finally {
              await admin.disconnect()
            }
          }
          await connect(producer.start())
        }).then(() => ready(() => delivery.healthy()))
        // Handled here, awaited by produceLogs: a failure to connect is its error, not an unhandled rejection.
        connected.catch(() => undefined)
        const source: AsyncIterable<SourceBatch | LineChunk> =
          // The generators load only for a generated run (a tenth of the modules a file run needs).
          sourceKind === 'generate'
            ? (await import('../../lib/sources/generator-source.js')).generateRecordBatches({
                kind,
                seed,
                signal,
                ...(records === undefined ? {} : { records }),
                ...(rate === undefined ? {} : { rateSchedule: rate })
              })
            : // A format that reads a line's bytes in place gets the file as read, undecoded and unsplit.
              sourceKind === 'file' &&
                values.follow !== true &&
                records === undefined &&
                formatFor(kind).writeLineBytes !== undefined
              ? readFileChunks(file, lines)
              : // A line's bytes serve a format whose record is the line itself (checkLine), not one that encodes it.
                sourceKind === 'file'
                ? limit(
                    readFileBatches(file, {
                      ...lines,
                      follow: values.follow === true,
                      lineBytes: formatFor(kind).checkLine !== undefined
                    }),
                    records
                  )
                : limit(stdin === undefined ? readStdinBatches(lines) : oneByOne(stdin.items), records)
        log.info({ topic, codec: formatCodecSpec(producerConfig.codec), source: sourceKind, kind }, 'producing')
        const progress = new Progress({ stream: process.stderr, log, quiet: values.quiet === true })
        const summary = settings.shipper
          ? await shipFileSet({
              values,
              settings,
              connection,
              topic,
              producer,
              log,
              signal,
              lines,
              onParseError,
              metrics: sourceMetrics,
              ready: connected
            })
          : await produceLogs({
              source,
              format: sourceKind === 'generate' ? null : formatFor(kind),
              topic,
              producer,
              onParseError,
              log,
              signal,
              ready: connected,
              progressEvery: 1000,
              onProgress: (s) =>
                progress.report({
                  phase: 'produce',
                  done: s.recordsSent,
                  ...(records === undefined ? {} : { total: records }),
                  unit: 'records'
                })
            })
        progress.done()
        await producer.close()
        const stats = producer.snapshot()
        const ratio = stats.compressedBytes === 0 ? 0 : stats.uncompressedBytes / stats.compressedBytes
        process.stdout.write(
          `${wrapLines(
            `produced ${stats.recordsAcked} records to ${topic} with ${formatCodecSpec(producerConfig.codec)}: ${stats.batchesAcked} batches, ` +
              `${stats.uncompressedBytes} bytes uncompressed -> ${stats.compressedBytes} bytes sent (${ratio.toFixed(2)}x)\n` +
              `compression cpu ${stats.compressCpuSeconds.toFixed(3)} s; lines not parsed: ${summary.parseErrors} (${onParseError}), ` +
              `records too large: ${summary.rejected}, lines split: ${linesSplit}, undelivered: ${stats.recordsFailed}; ` +
              deliveryOutcome(stats),
            terminalLayout(process.stdout, false)
          )}\n`
        )
        return stats.recordsFailed > 0 ? 1 : 0
      } finally {
        await producer.close().catch(() => undefined)
      }
    }
  })
}

/** Every accepted record is acknowledged or failed once the producer is closed; a gap says how many are not yet. */
function deliveryOutcome(stats: ProducerStats): string {
  const unsettled = stats.recordsAccepted - stats.recordsAcked - stats.recordsFailed
  return (
    `accepted ${stats.recordsAccepted}: ${stats.recordsAcked} acknowledged, ${stats.recordsFailed} failed` +
    (unsettled === 0 ? '' : `, ${unsettled} without an outcome yet`)
  )
}

/**
 * Followed files or a file set, with their read positions in the state directory, or with --exactly-once in the
 * positions topic, read once the producer's InitProducerId has ended what a previous instance left open.
 */
async function shipFileSet(args: {
  values: {
    exclude?: string[]
    'state-dir'?: string
    'no-state'?: boolean
    'no-source-header'?: boolean
    'host-header'?: boolean
    follow?: boolean
    'positions-topic'?: string
  }
  settings: { patterns: FilePattern[]; fileSet: string; exactlyOnce: boolean; transactionalId: string; host: string }
  connection: KafkaConnectionConfig
  topic: string
  producer: Producer
  log: Logger
  signal: AbortSignal
  lines: { maxLineBytes: number; onLineSplit: () => void }
  onParseError: ParseErrorPolicy
  metrics: SourceMetrics
  ready: Promise<unknown>
}): Promise<ProduceLogsSummary> {
  const { values, settings, topic, log } = args
  const env = process.env
  let store: PositionStore | null = null
  let kafkaPositions: KafkaPositions | null = null
  let saved: FilePosition[] = []
  if (settings.exactlyOnce) {
    kafkaPositions = new KafkaPositions(values['positions-topic'] ?? 'squeeze-positions', settings.fileSet)
    await args.ready
    saved = await withAdmin(args.connection, log, async (admin) => {
      await (kafkaPositions as KafkaPositions).ensureTopic(admin)
      const cluster = createCluster(args.connection, log)
      await cluster.connect()
      try {
        return await (kafkaPositions as KafkaPositions).load({ cluster, admin, log })
      } finally {
        await cluster.disconnect()
      }
    })
  } else if (values['no-state'] !== true) {
    store = new PositionStore(values['state-dir'] ?? defaultStateDir(env), settings.fileSet)
    saved = await store.load()
  }
  const state = kafkaPositions?.topic ?? store?.path ?? null
  const transactionalId = settings.exactlyOnce ? settings.transactionalId : null
  log.info({ files: settings.patterns, state, transactionalId, positions: saved.length }, 'shipping a file set')
  const files = new FileSet({
    patterns: settings.patterns,
    exclude: values.exclude ?? [],
    follow: values.follow === true,
    ...args.lines,
    saved,
    log,
    signal: args.signal,
    onLost: () => args.metrics.lostFile()
  })
  return shipFiles({
    files,
    topic,
    producer: args.producer,
    onParseError: args.onParseError,
    formatFor: (kind) => (kind === CRI_KIND ? null : formatFor(kind as LogKind)),
    headers: { file: values['no-source-header'] !== true, host: values['host-header'] === true ? settings.host : null },
    positions: store,
    ...(kafkaPositions === null ? {} : { transactional: kafkaPositions }),
    saved,
    checkpointMs: 1000,
    log,
    metrics: args.metrics,
    ready: args.ready
  })
}

async function withAdmin<T>(
  connection: KafkaConnectionConfig,
  log: Logger,
  run: (admin: Admin) => Promise<T>
): Promise<T> {
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  try {
    return await run(admin)
  } finally {
    await admin.disconnect()
  }
}

/** Kinds a --file KIND:GLOB names: the log kinds, and cri (container logs, sent as they are with pod headers). */
const SHIPPER_KINDS: readonly string[] = [...LOG_KINDS, CRI_KIND]

/**
 * A file set's patterns with `auto` (no --kind, no KIND: prefix) replaced by the kind of the first file the pattern
 * matches now, detected from its first lines. The file set's id keeps `auto`, so it does not change with the data.
 */
async function resolvePatternKinds(patterns: readonly FilePattern[], log: Logger): Promise<FilePattern[]> {
  return Promise.all(
    patterns.map(async (p) => {
      if (p.kind !== 'auto') return p
      let first: string | undefined
      for await (const path of glob(p.glob)) {
        first = path
        break
      }
      const resolved = resolveKind('auto', first === undefined ? [] : await readFirstLines(first), first ?? p.glob)
      if (resolved.note !== undefined) log.info({ kind: resolved.kind, glob: p.glob }, resolved.note)
      return { ...p, kind: resolved.kind }
    })
  )
}

async function* eachItem(batches: AsyncIterable<SourceBatch>): AsyncGenerator<SourceItem> {
  for await (const batch of batches) yield* batch
}

async function* oneByOne(items: AsyncIterable<SourceItem>): AsyncGenerator<SourceBatch> {
  for await (const item of items) yield [item]
}

/** The first `max` items of the batches. */
async function* limit(batches: AsyncIterable<SourceBatch>, max: number | undefined): AsyncGenerator<SourceBatch> {
  if (max === undefined) {
    yield* batches
    return
  }
  let n = 0
  for await (const batch of batches) {
    yield batch.length <= max - n ? batch : batch.slice(0, max - n)
    n += batch.length
    if (n >= max) return
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => produceMain(process.argv.slice(2)))
