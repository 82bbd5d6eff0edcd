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
import { DETECT_LINES, KIND_CHOICES, type KindChoice } from '../../lib/formats/detect-kind.js'
import { formatFor, LOG_KINDS } from '../../lib/formats/index.js'
import { createCluster, createKafkaClient } from '../../lib/kafka/connection.js'
import { BROKER_DEFAULT_REPLICATION_FACTOR, ensureTopic } from '../../lib/kafka/topics.js'
import type { Logger } from '../../lib/log/logger.js'
import { createDeliveryMetrics } from '../../lib/metrics/delivery-metrics.js'
import { createProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { createSourceMetrics } from '../../lib/metrics/source-metrics.js'
import {
  detectInputKind,
  inputBytes,
  recordSource,
  type DetectedInput,
  type ProduceInput
} from '../../lib/pipeline/produce-input.js'
import { produceLogs, type ProduceLogsSummary } from '../../lib/pipeline/produce-logs.js'
import { shipFileSet, type PositionsPlace } from '../../lib/pipeline/ship-file-set.js'
import { shutdownDeadlineMs } from '../../lib/producer/config.js'
import { Producer } from '../../lib/producer/producer.js'
import { Progress } from '../../lib/progress/progress.js'
import { deliveryOutcome, produceSummary, undelivered } from '../../lib/report/produce-summary.js'
import { terminalLayout, wrapLines } from '../../lib/report/terminal.js'
import { watchDelivery, type DeliveryHealth } from '../../lib/service/delivery-health.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runService, type ServiceContext } from '../../lib/service/run-service.js'
import { CRI_KIND, isFileSet, parseFilePatterns } from '../../lib/sources/file-set.js'
import { defaultStateDir, fileSetId } from '../../lib/sources/position-store.js'
import { DEFAULT_MAX_LINE_BYTES } from '../../lib/sources/line-splitter.js'
import { parseRateSchedule } from '../../lib/sources/rate-schedule.js'

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

type ProduceFlags = NonNullable<ReturnType<typeof parseCommandLine<typeof OPTIONS>>>['values']
type ProduceSettings = ReturnType<typeof produceSettings>

export async function produceMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const flags = parseCommandLine(argv, OPTIONS, PRODUCE_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  // Every setting is validated before anything connects (runService's configure).
  const topic = requireString(values.topic, 'topic', 'name the destination topic')
  return runService({
    name: 'squeeze-producer',
    service: serviceOptionsFrom(values),
    configure: (log) => produceSettings(values, topic, env, log),
    start: produce
  })
}

/** Kinds a --file KIND:GLOB names: the log kinds, and cri (container logs, sent as they are with pod headers). */
const SHIPPER_KINDS: readonly string[] = [...LOG_KINDS, CRI_KIND]

/** The flags as one validated settings object; every problem is a start-up error. */
function produceSettings(values: ProduceFlags, topic: string, env: NodeJS.ProcessEnv, log: Logger) {
  const connection = connectionFrom(values, env, log)
  const codec = values.codec === undefined ? undefined : parseCodecSpec(values.codec)
  const warn = (message: string): void => log.warn(message)
  const producerConfig = producerConfigFrom(parseProperties(values.X ?? []), codec, {}, warn)
  const source = oneOf(values.source, 'source', ['generate', 'file', 'stdin'] as const, 'generate')
  const files = values.file ?? []
  const kind = oneOf<KindChoice>(values.kind, 'kind', KIND_CHOICES, source === 'generate' ? 'http' : 'auto')
  const records = parseInteger(values.records, 'records', 1) ?? (source === 'generate' ? 100_000 : undefined)
  const invalid = (message: string): SqueezeError => new SqueezeError(ErrorCodes.CONFIG_INVALID, message)
  const rate = values.rate === undefined ? undefined : parseRateSchedule(values.rate)
  const seed = parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 1
  const maxLineBytes = parseInteger(values['max-line-bytes'], 'max-line-bytes', 64, 2 ** 28) ?? DEFAULT_MAX_LINE_BYTES
  const onParseError = oneOf(values['on-parse-error'], 'on-parse-error', ['skip', 'raw'] as const, 'skip')
  const createPartitions = parseInteger(values['create-partitions'], 'create-partitions', 1, 10000)
  const replicationFactor = parseInteger(values['replication-factor'], 'replication-factor', 1, 100)
  if (source === 'file' && files.length === 0) throw invalid('missing --file: --source file needs a path')
  if (source === 'generate' && kind === 'auto')
    throw invalid('--kind auto applies to a file or stdin: name the kind to generate')
  const follow = values.follow === true
  const shipper = source === 'file' && (follow || isFileSet(files, SHIPPER_KINDS))
  if (shipper && records !== undefined) throw invalid('--records does not apply to followed files or a file set')
  const exactlyOnce = values['exactly-once'] === true
  if (exactlyOnce && !shipper) throw invalid('--exactly-once needs --source file with --follow or a file set')
  const patterns = parseFilePatterns(files, SHIPPER_KINDS, kind)
  const host = values['host-name'] ?? hostname()
  const fileSet = fileSetId(
    host,
    topic,
    patterns.map((p) => `${p.kind}:${p.glob}`)
  )
  const transactionalId = `squeeze-ship.${fileSet}`
  // Only a file set keeps read positions: no other run asks where the state directory is.
  const positions: PositionsPlace = exactlyOnce
    ? { kind: 'topic', topic: values['positions-topic'] ?? 'squeeze-positions', transactionalId }
    : !shipper || values['no-state'] === true
      ? { kind: 'none' }
      : { kind: 'state-dir', dir: values['state-dir'] ?? defaultStateDir(env) }
  return {
    topic,
    connection,
    producerConfig,
    input: { source, kind, file: files[0], follow, shipper, records, rate, seed },
    maxLineBytes,
    onParseError,
    createPartitions,
    replicationFactor,
    shutdownTimeoutMs: shutdownDeadlineMs(producerConfig),
    quiet: values.quiet === true,
    fileSet: { patterns, exclude: values.exclude ?? [], fileSet, positions },
    headers: { file: values['no-source-header'] !== true, host: values['host-header'] === true ? host : null },
    transactionalId: exactlyOnce ? transactionalId : undefined
  }
}

/** Reads the input while the producer connects, sends every record, and prints what became of them. */
async function produce(context: ServiceContext, settings: ProduceSettings): Promise<number> {
  const { log, registry, signal } = context
  const { topic, producerConfig, onParseError } = settings
  const sourceMetrics = createSourceMetrics(registry)
  let linesSplit = 0
  const onLineSplit = (): void => {
    linesSplit++
    sourceMetrics.lineSplit()
  }
  const input: ProduceInput = { ...settings.input, lines: { maxLineBytes: settings.maxLineBytes, onLineSplit, signal } }
  const detected = await detectInputKind(input, settings.fileSet.patterns, log, settings.fileSet.exclude)
  const producer = new Producer(producerConfig, {
    cluster: createCluster(settings.connection, log),
    log: log.child({ component: 'producer' }),
    metrics: createProducerMetrics(registry),
    ...(settings.transactionalId === undefined ? {} : { transactionalId: settings.transactionalId })
  })
  // A file read once says how much is coming: a large one gets its compression thread at once, a small one none.
  const size = await inputBytes(input)
  if (size !== undefined) producer.expectInputBytes(size)
  const delivery = watchDelivery(producer, { metrics: createDeliveryMetrics(registry), log })
  context.reportAtDeadline(() => deliveryOutcome(producer.snapshot()))
  try {
    // The source is read and parsed while this connects; produceLogs holds the records until it is done.
    const connected = connectProducer(context, settings, producer, delivery)
    // Handled here, awaited by produceLogs: a failure to connect is its error, not an unhandled rejection.
    connected.catch(() => undefined)
    const summary = await send({ context, settings, input, detected, producer, ready: connected, sourceMetrics })
    await producer.close()
    const stats = producer.snapshot()
    const codec = formatCodecSpec(producerConfig.codec)
    const text = produceSummary(stats, { topic, codec, onParseError, linesSplit, ...summary })
    process.stdout.write(`${wrapLines(text, terminalLayout(process.stdout, false))}\n`)
    return undelivered(stats, summary) ? 1 : 0
  } finally {
    await producer.close().catch(() => undefined)
  }
}

/** Creates the topic where asked (a refusal marks delivery unhealthy), then starts the producer; then ready. */
async function connectProducer(
  { log, waitForCluster, connect, ready }: ServiceContext,
  { connection, topic, createPartitions, replicationFactor }: ProduceSettings,
  producer: Producer,
  delivery: DeliveryHealth
): Promise<void> {
  await waitForCluster(async () => {
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
  })
  ready(() => delivery.healthy())
}

/** The records to the producer: a file set through shipFileSet, any other input through produceLogs. */
async function send(args: {
  context: ServiceContext
  settings: ProduceSettings
  input: ProduceInput
  detected: DetectedInput
  producer: Producer
  ready: Promise<void>
  sourceMetrics: ReturnType<typeof createSourceMetrics>
}): Promise<ProduceLogsSummary> {
  const { context, settings, input, detected, producer, ready } = args
  const { log, signal } = context
  const { topic, onParseError } = settings
  const shared = { connection: settings.connection, topic, producer, log, signal, onParseError, ready }
  const source = settings.input.shipper ? undefined : await recordSource(input, detected)
  // A file set's kinds are per pattern, in its own line ('shipping a file set').
  const kind = source === undefined ? {} : { kind: detected.kind }
  log.info({ topic, codec: formatCodecSpec(settings.producerConfig.codec), source: input.source, ...kind }, 'producing')
  const progress = new Progress({ stream: process.stderr, log, quiet: settings.quiet })
  const summary =
    source === undefined
      ? await shipFileSet({
          ...shared,
          ...settings.fileSet,
          patterns: detected.patterns,
          follow: input.follow,
          headers: settings.headers,
          lines: input.lines,
          metrics: args.sourceMetrics
        })
      : await produceLogs({
          ...shared,
          source,
          format: input.source === 'generate' ? null : formatFor(detected.kind),
          progressEvery: 1000,
          onProgress: (s) =>
            progress.report({
              phase: 'produce',
              done: s.recordsSent,
              ...(input.records === undefined ? {} : { total: input.records }),
              unit: 'records'
            })
        })
  progress.done()
  return summary
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => produceMain(process.argv.slice(2)))
