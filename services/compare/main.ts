import { readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { pathToFileURL } from 'node:url'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  connectionFrom,
  oneOf,
  parseCommandLine,
  parseInteger,
  serviceOptionsFrom
} from '../../lib/config/cli.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../lib/copier/copier.js'
import { DEFAULT_TARGETS, parseTargets } from '../../lib/copier/targets.js'
import { parseProperties, producerConfigFrom } from '../../lib/config/producer-properties.js'
import { splitReadSettings } from '../../lib/config/read-properties.js'
import { TimestampSample } from '../../lib/compare/ingest-rate.js'
import {
  recommendFor,
  runCompare,
  type CompareOutcome,
  type CompareRunOptions,
  type RateEvidence
} from '../../lib/compare/run-compare.js'
import { applyAs, type ApplyAs } from '../../lib/apply/apply-as.js'
import { applyTopicConfig } from '../../lib/apply/apply-topic.js'
import { CLIENT_NAMES, parseClients, targetsNeededFor, type ClientName } from '../../lib/apply/client-limits.js'
import { parseTopicMode, type TopicCompressionMode } from '../../lib/apply/topic-config.js'
import { renderApplyMarkdown, renderApplyText } from '../../lib/report/compare-apply.js'
import { formatCodecSpec } from '../../lib/codecs/index.js'
import type { CompareReport } from '../../lib/compare/compare-report.js'
import { missingCopyAcl } from '../../lib/compare/copy-acl.js'
import { runProjection, type ProjectionRunOptions } from '../../lib/compare/projection/run-projection.js'
import { parseBatchSizeList, parseLingerList, parseSampleFlags } from '../../lib/compare/projection/sweep-flags.js'
import { renderBatchingHeatmapSvg } from '../../lib/report/batching-heatmap-svg.js'
import { DEFAULT_RATE_LOOKBACK_MS } from '../../lib/compare/topic-rate.js'
import { findSqueezeRoot } from '../../lib/embedded-broker/kafka-jars.js'
import {
  acquireBroker,
  killEmbeddedBrokersOnExit,
  type AcquiredBroker
} from '../../lib/embedded-broker/select-broker.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import {
  readFirstLines,
  resolveKind,
  wrongKindError,
  KIND_CHOICES,
  type KindChoice
} from '../../lib/formats/detect-kind.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { lineClock, type LineClock } from '../../lib/formats/line-time.js'
import {
  createCluster,
  createKafkaClient,
  DEFAULT_CONNECTION,
  type KafkaConnectionConfig
} from '../../lib/kafka/connection.js'
import { ensureTopic } from '../../lib/kafka/topics.js'
import type { Logger } from '../../lib/log/logger.js'
import { produceLogs } from '../../lib/pipeline/produce-logs.js'
import { DEFAULT_PRODUCER_CONFIG, Producer, type ProducerConfig } from '../../lib/producer/producer.js'
import { renderCompareJson } from '../../lib/report/compare-json.js'
import { renderCompareMarkdown } from '../../lib/report/compare-markdown.js'
import { renderCompareSvg } from '../../lib/report/compare-svg.js'
import { renderCompareTable } from '../../lib/report/compare-table.js'
import { terminalLayout } from '../../lib/report/terminal.js'
import { Progress, type OnProgress } from '../../lib/progress/progress.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runOneShot } from '../../lib/service/run-service.js'
import { readFileLines } from '../../lib/sources/file-source.js'
import { generateRecords } from '../../lib/sources/generator-source.js'
import type { SourceItem } from '../../lib/sources/source.js'

export const COMPARE_HELP = `squeeze compare: copy one topic into a topic per codec/level, read every copy back, and report what each
codec costs (CPU) and saves (bytes on the broker), with a recommendation.

Usage: squeeze compare --topic SOURCE --brokers HOST:PORT [options]     (an existing topic on your cluster)
       squeeze compare --topic SOURCE --brokers HOST:PORT --mode projection  (read-only: Read+Describe on SOURCE)
       squeeze compare --source generate|file [--kind KIND] [--file PATH] (fills a source topic first;
                                                                        without --brokers a checkout starts its own broker)
Input and budget:
  --topic SOURCE             existing source topic
  --source generate|file     or fill a new source topic from generated logs or a file
  --kind KIND                auto, ${LOG_KINDS.join(', ')} (default: auto for --source file, detected from the
                             first lines; http for --source generate)
  --file PATH                with --source file
  --partitions N             partitions of a filled source topic (default 3)
  --records N, --bytes N     copy at most N source records / uncompressed bytes (generate default 50000)
  --duration-s S             stop copying after S seconds (a partial report)
  --format KIND|none         decode destination records as KIND while measuring (default: --kind for filled sources, none for --topic)
Mode:
  --mode copy|projection     copy (default): write one topic per target and take stored sizes from the broker.
                             projection: read-only, creates nothing; re-batches the records as the producer would
                             (same partitions, batch.size, linger.ms on the records' timestamps) and compresses
                             every batch per target in memory
  --threads N                projection: targets compressed in parallel (default: the machine's cores)
  --sample N|SIZE            projection: about N records, or SIZE of record bytes (64MiB), read as windows spread
                             over every partition's retained range (not the first N); the report gives the plan
                             and 95% intervals, and the ingest rate over the sampled time span
  --sample-windows K         windows per partition for --sample (default 8)
  --linger-ms LIST           projection: batching what-if over these linger.ms values, e.g. 0,5,50,200,1000
  --batch-size LIST          projection: ... and these batch.size values, e.g. 16KiB,128KiB,1MiB (default: -X batch.size)
Targets and output:
  --targets LIST             codec[:level] list (default ${DEFAULT_TARGETS.join(',')})
  --destination TEMPLATE     destination names, {source} and {target} replaced (default {source}.{target})
  --cpu-budget S             recommend the smallest stored size costing at most S compress CPU seconds per GiB
  --target-ratio X           recommend the cheapest target reaching ratio X
  --consumers N              consumer groups reading the topic: fetch bytes saved count N times (default 1);
                             bytes on disk count once per replica
  --rate-window-h H          with --topic: measure its ingest rate over the last H hours of broker offsets (default 24;
                             with --sample: over the sampled time span)
  --json FILE  --markdown FILE  --chart FILE.svg   (with a what-if, also FILE.batching.svg: a heatmap)
  --keep-topics              keep the destination (and filled source) topics
  -X NAME=VALUE              producer settings for every target (linger.ms, batch.size, ...); and
                             squeeze.max.batch.uncompressed.bytes, the most one batch read may decompress to (default
                             128 MiB); a source batch over it, or corrupt, is left out and counted in the current row
Clients (docs/clients.md):
  --client LIST              per client, the best target it can set, by the recommendation's rule (default all):
                             ${CLIENT_NAMES.join(', ')}
                             targets a client needs are added (zstd:12 beside zstd:19 for librdkafka)
  --show-settings            print each client's settings to paste (always in --json applyAs and --markdown)
  --topic-compression producer|codec   the topic side: keep compression.type=producer (default) or set the codec
  --apply-topic-config       with --topic: set those topic configs (IncrementalAlterConfigs, after a validated dry run)
  --wide                     every column in the printed report (default: fit the terminal, 100 columns
                             when stdout is not one); --json and --markdown always hold every field
  --quiet                    no progress line on stderr
${COMMON_HELP}

Bytes/day saved use the source's own ingest rate: a topic's offsets by timestamp (else its records' timestamps),
a file's line timestamps, the generator's clock. Without one the report says so and gives savings per GiB of input.

Ctrl-C ends the copy and prints a partial report. Exit codes: 0 done; 1 runtime failure; 2 invalid arguments.`

const OPTIONS = {
  ...COMMON_OPTIONS,
  topic: { type: 'string' },
  source: { type: 'string' },
  kind: { type: 'string' },
  file: { type: 'string' },
  partitions: { type: 'string' },
  records: { type: 'string' },
  bytes: { type: 'string' },
  'duration-s': { type: 'string' },
  format: { type: 'string' },
  targets: { type: 'string' },
  destination: { type: 'string' },
  'cpu-budget': { type: 'string' },
  'target-ratio': { type: 'string' },
  consumers: { type: 'string' },
  'rate-window-h': { type: 'string' },
  json: { type: 'string' },
  markdown: { type: 'string' },
  chart: { type: 'string' },
  client: { type: 'string' },
  'show-settings': { type: 'boolean' },
  'topic-compression': { type: 'string' },
  'apply-topic-config': { type: 'boolean' },
  'keep-topics': { type: 'boolean' },
  mode: { type: 'string' },
  threads: { type: 'string' },
  sample: { type: 'string' },
  'sample-windows': { type: 'string' },
  'linger-ms': { type: 'string' },
  'batch-size': { type: 'string' },
  seed: { type: 'string' },
  X: { type: 'string', short: 'X', multiple: true },
  quiet: { type: 'boolean' },
  wide: { type: 'boolean' }
} as const

/** Without kafka/pom.xml (the image ships only dist/ and production modules) no broker can be started here. */
const NO_LOCAL_KAFKA =
  'missing --brokers: this installation cannot start a Kafka of its own (no kafka/pom.xml, as in the container image); pass --brokers HOST:PORT or set KAFKA_BROKERS'

function positiveNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--${flag} must be a positive number, got "${value}"`)
  return n
}

function squeezeVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

export async function compareMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  installKafkajsDecoders()
  const flags = parseCommandLine(argv, OPTIONS, COMPARE_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  return runOneShot({
    name: 'squeeze-compare',
    service: serviceOptionsFrom({ ...values, 'log-level': values['log-level'] ?? 'warn' }),
    configure: (log) => {
      const sourceKind =
        values.topic !== undefined
          ? ('topic' as const)
          : oneOf(values.source, 'source', ['generate', 'file'] as const, 'generate')
      if (values.topic !== undefined && values.source !== undefined)
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          'give either --topic (an existing topic) or --source, not both'
        )
      if (sourceKind === 'file' && values.file === undefined)
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'missing --file: --source file needs a path')
      const kind = oneOf<KindChoice>(values.kind, 'kind', KIND_CHOICES, sourceKind === 'file' ? 'auto' : 'http')
      if (kind === 'auto' && sourceKind !== 'file')
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          '--kind auto applies to --source file: name the kind to generate'
        )
      const formatName = oneOf(
        values.format,
        'format',
        [...LOG_KINDS, 'none'] as const,
        sourceKind === 'topic' ? 'none' : kind === 'auto' ? 'none' : kind
      )
      // A file's --format follows the kind its lines turn out to be, unless given.
      const formatFollowsKind = values.format === undefined && sourceKind !== 'topic'
      const { read, rest } = splitReadSettings(parseProperties(values.X ?? []))
      const producer = producerConfigFrom(rest, undefined, COPIER_PRODUCER_DEFAULTS)
      const partitions = parseInteger(values.partitions, 'partitions', 1, 1000) ?? 3
      const maxRecords = parseInteger(values.records, 'records', 1) ?? (sourceKind === 'generate' ? 50_000 : undefined)
      const maxBytes = parseInteger(values.bytes, 'bytes', 1)
      const durationS = positiveNumber(values['duration-s'], 'duration-s')
      const cpuBudget = positiveNumber(values['cpu-budget'], 'cpu-budget')
      const targetRatio = positiveNumber(values['target-ratio'], 'target-ratio')
      const consumers = parseInteger(values.consumers, 'consumers', 0, 10000) ?? 1
      const rateWindowH = positiveNumber(values['rate-window-h'], 'rate-window-h')
      if (rateWindowH !== undefined && sourceKind !== 'topic')
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          "--rate-window-h applies to --topic only: a filled source's rate comes from its lines' or the generator's timestamps"
        )
      if (rateWindowH !== undefined && values.sample !== undefined)
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          "--rate-window-h does not apply with --sample: a sample's rate is measured over the time span it covers"
        )
      const seed = parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 42
      const projection = projectionFlags(values, producer)
      if (projection !== undefined && durationS !== undefined)
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          '--duration-s applies to --mode copy; bound a projection with --records or --bytes'
        )
      const explicitBrokers = values.brokers ?? (env.KAFKA_BROKERS === '' ? undefined : env.KAFKA_BROKERS)
      if (sourceKind === 'topic' && explicitBrokers === undefined)
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          'missing --brokers: comparing an existing topic needs its cluster (or set KAFKA_BROKERS)'
        )
      if (explicitBrokers === undefined && findSqueezeRoot() === undefined)
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, NO_LOCAL_KAFKA)
      const sourceTopic = values.topic ?? `squeeze-compare.${kind}.${Date.now()}`
      const clients = parseClients(values.client)
      const topicMode = parseTopicMode(values['topic-compression'])
      if (values['apply-topic-config'] === true && sourceKind !== 'topic') {
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--apply-topic-config needs --topic: it changes a topic')
      }
      const named = parseTargets(values.targets ?? DEFAULT_TARGETS.join(','), sourceTopic, values.destination)
      const added = targetsNeededFor(
        named.map((t) => t.spec),
        clients
      )
      const withAdded = [...named.map((t) => t.spec), ...added].map(formatCodecSpec).join(',')
      const targets = added.length === 0 ? named : parseTargets(withAdded, sourceTopic, values.destination)
      return {
        sourceKind,
        kind,
        partitions,
        seed,
        sourceTopic,
        projection,
        formatName,
        formatFollowsKind,
        clients,
        topicMode,
        added: added.map(formatCodecSpec),
        // Without --brokers the cluster is a broker this command starts, so the connection is known only then.
        connection:
          explicitBrokers === undefined ? undefined : connectionFrom({ ...values, brokers: explicitBrokers }, env, log),
        description:
          sourceKind === 'topic'
            ? `topic ${sourceTopic}`
            : sourceKind === 'file'
              ? `file ${values.file}`
              : `generated ${kind} logs, seed ${seed}`,
        lookbackMs: rateWindowH === undefined ? DEFAULT_RATE_LOOKBACK_MS : rateWindowH * 3_600_000,
        compare: {
          sourceTopic,
          targets,
          format: formatName === 'none' ? null : formatFor(formatName),
          producer,
          ...(maxRecords === undefined ? {} : { maxRecords }),
          ...(maxBytes === undefined ? {} : { maxBytes }),
          ...(durationS === undefined ? {} : { durationMs: durationS * 1000 }),
          keepTopics: values['keep-topics'] === true,
          consumers,
          read,
          ...(cpuBudget === undefined ? {} : { cpuBudgetSecondsPerGiB: cpuBudget }),
          ...(targetRatio === undefined ? {} : { targetRatio }),
          version: squeezeVersion()
        },
        shutdownTimeoutMs: 120_000
      }
    },
    start: async ({ log, signal, connect }, configured) => {
      const { sourceKind, sourceTopic } = configured
      // A file's kind is checked against (or, for auto, read from) its first lines before any broker starts.
      const sample = sourceKind === 'file' ? await readFirstLines(values.file as string) : []
      const resolved =
        sourceKind === 'file'
          ? resolveKind(configured.kind, sample, values.file as string)
          : { kind: configured.kind as LogKind }
      if (resolved.note !== undefined && values.quiet !== true) process.stderr.write(`${resolved.note}\n`)
      const { kind } = resolved
      const formatName = configured.formatFollowsKind ? kind : configured.formatName
      const settings = {
        ...configured,
        kind,
        formatName,
        description: sourceKind === 'file' ? `${configured.description} (${kind})` : configured.description,
        compare: { ...configured.compare, format: formatName === 'none' ? null : formatFor(formatName) }
      }
      const progressLine = new Progress({ stream: process.stderr, log, quiet: values.quiet === true })
      const progress = progressLine.report
      let broker: AcquiredBroker | undefined
      try {
        let connection = settings.connection
        if (connection === undefined) {
          process.stderr.write(
            'no --brokers: starting Kafka (testcontainers if Docker answers, else the embedded JVM broker)...\n'
          )
          // Ctrl-C only aborts the copy (the skeleton's shutdown): the broker serves the partial report, then stop()
          // below ends it. A second Ctrl-C or the shutdown deadline exits at once, and this takes the JVM along.
          killEmbeddedBrokersOnExit()
          broker = await acquireBroker((msg: string) => log.info(msg))
          connection = { ...DEFAULT_CONNECTION, brokers: broker.brokers, clientId: 'squeeze-compare' }
        }
        const admin = createKafkaClient(connection, log).admin()
        await connect(admin.connect(), connection)
        const filled = sourceKind !== 'topic'
        try {
          let rateEvidence: RateEvidence
          if (sourceKind === 'topic') {
            if (!(await admin.listTopics()).includes(sourceTopic))
              throw new SqueezeError(
                ErrorCodes.SOURCE,
                `source topic ${sourceTopic} not found on ${connection.brokers.join(',')}`
              )
            rateEvidence = { kind: 'topic', lookbackMs: settings.lookbackMs }
          } else {
            await ensureTopic(admin, sourceTopic, settings.partitions)
            rateEvidence = await fillSource(
              connection,
              log,
              sourceTopic,
              sourceKind,
              kind,
              values.file,
              settings.compare.maxRecords,
              settings.seed,
              signal,
              progress,
              sample
            )
          }
          const sourceDescription = { kind: sourceKind, description: settings.description }
          const { compare, projection, formatName } = settings
          const outcome =
            projection !== undefined
              ? await runProjection({
                  connection,
                  sourceTopic,
                  sourceDescription,
                  targets: compare.targets,
                  format: formatName === 'none' ? null : formatName,
                  rateEvidence,
                  batching: compare.producer,
                  ...projection,
                  ...(compare.maxRecords === undefined ? {} : { maxRecords: compare.maxRecords }),
                  ...(compare.maxBytes === undefined ? {} : { maxBytes: compare.maxBytes }),
                  consumers: compare.consumers,
                  read: compare.read,
                  ...(compare.cpuBudgetSecondsPerGiB === undefined
                    ? {}
                    : { cpuBudgetSecondsPerGiB: compare.cpuBudgetSecondsPerGiB }),
                  ...(compare.targetRatio === undefined ? {} : { targetRatio: compare.targetRatio }),
                  version: compare.version,
                  log,
                  signal,
                  onProgress: progress
                })
              : await runCompare({
                  ...compare,
                  connection,
                  sourceDescription,
                  rateEvidence,
                  log,
                  signal,
                  onProgress: progress
                }).catch((err: unknown) => {
                  throw missingCopyAcl(err, sourceTopic) ?? err
                })
          progressLine.done()
          const apply = applyFor(outcome, settings, compare, filled ? undefined : connection.brokers.join(','))
          const code = writeReports(outcome, apply, settings.added, values)
          if (values['apply-topic-config'] === true && apply.topic === null) {
            process.stderr.write(
              'squeeze: --apply-topic-config: nothing was recommended, so no topic config was changed\n'
            )
          }
          if (values['apply-topic-config'] === true && apply.topic !== null) {
            const cluster = createCluster(connection, log)
            await cluster.connect()
            try {
              await applyTopicConfig(cluster, apply.topic, (line) => process.stdout.write(`${line}\n`))
            } finally {
              await cluster.disconnect().catch(() => undefined)
            }
          }
          return code
        } finally {
          if (filled && values['keep-topics'] !== true)
            await admin.deleteTopics({ topics: [sourceTopic] }).catch(() => undefined)
          await admin.disconnect().catch(() => undefined)
        }
      } finally {
        await broker?.stop()
      }
    }
  })
}

/**
 * The verdict per client, by the recommendation's own rule and options. A filled source's topic and broker are
 * throwaways, so its settings name placeholders.
 */
function applyFor(
  outcome: CompareOutcome,
  settings: { clients: readonly ClientName[]; topicMode: TopicCompressionMode; sourceTopic: string },
  compare: Pick<CompareRunOptions, 'consumers' | 'cpuBudgetSecondsPerGiB' | 'targetRatio'>,
  brokers: string | undefined
): ApplyAs {
  const { report } = outcome
  const rule = (rows: Parameters<typeof recommendFor>[0]): ReturnType<typeof recommendFor> =>
    recommendFor(rows, compare, report.source.ingestRate, report.settings.replicationFactor)
  return applyAs(report, settings.clients, rule, {
    brokers: brokers ?? '<brokers>',
    topic: brokers === undefined ? '<topic>' : settings.sourceTopic,
    topicMode: settings.topicMode,
    ...(outcome.batchShares === undefined ? {} : { batchShares: outcome.batchShares })
  })
}

/** Prints the table, writes the files asked for; exit 1 when the destinations did not get identical traffic. */
function writeReports(
  outcome: CompareOutcome,
  apply: ApplyAs,
  added: readonly string[],
  files: {
    json?: string | undefined
    markdown?: string | undefined
    chart?: string | undefined
    'show-settings'?: boolean | undefined
    wide?: boolean | undefined
  }
): number {
  // A run stopped early (Ctrl-C, --duration-s) still reports what it has, marked partial: the stop was the user's.
  if (!outcome.partial && outcome.report.targets.every((t) => t.records === 0)) {
    throw new SqueezeError(
      ErrorCodes.SOURCE,
      `read no record from ${outcome.report.source.description}: nothing to compare, no recommendation`
    )
  }
  if (outcome.partial)
    process.stdout.write('PARTIAL: the copy was stopped before the end of the source (Ctrl-C or --duration-s)\n')
  process.stdout.write(`${renderCompareTable(outcome.report, terminalLayout(process.stdout, files.wide === true))}\n`)
  if (added.length > 0) {
    process.stdout.write(`added for --client: ${added.join(', ')} (the nearest level a named client can set)\n`)
  }
  process.stdout.write(
    renderApplyText(apply, files['show-settings'] === true, terminalLayout(process.stdout, files.wide === true))
  )
  if (files.json !== undefined) writeFileSync(files.json, renderCompareJson(outcome.report, apply))
  if (files.markdown !== undefined) {
    writeFileSync(files.markdown, `${renderCompareMarkdown(outcome.report)}\n${renderApplyMarkdown(apply)}`)
  }
  if (files.chart !== undefined) {
    writeFileSync(files.chart, renderCompareSvg(outcome.report))
    process.stdout.write(`chart: ${files.chart}\n`)
    const heatmap = writeBatchingHeatmap(outcome.report, files.chart)
    if (heatmap !== undefined) process.stdout.write(`batching heatmap: ${heatmap}\n`)
  }
  const counts = new Set(outcome.report.targets.map((t) => t.records))
  const digests = new Set(outcome.report.targets.map((t) => t.digest))
  if (counts.size > 1 || digests.size > 1) {
    process.stderr.write('squeeze: destinations differ in records; the comparison is not on identical traffic\n')
    return 1
  }
  return 0
}

/** --mode projection's settings, checked once; undefined in copy mode, where the projection flags are refused. */
function projectionFlags(
  values: {
    mode?: string
    threads?: string
    sample?: string
    'sample-windows'?: string
    'linger-ms'?: string
    'batch-size'?: string
  },
  producer: ProducerConfig
): Pick<ProjectionRunOptions, 'threads' | 'sweep' | 'sample'> | undefined {
  const mode = oneOf(values.mode, 'mode', ['copy', 'projection'] as const, 'copy')
  if (mode === 'copy') {
    const misplaced = (['threads', 'sample', 'sample-windows', 'linger-ms', 'batch-size'] as const).filter(
      (flag) => values[flag] !== undefined
    )
    if (misplaced.length > 0)
      throw new SqueezeError(
        ErrorCodes.CONFIG_INVALID,
        `${misplaced.map((f) => `--${f}`).join(', ')} appl${misplaced.length === 1 ? 'ies' : 'y'} to --mode projection only`
      )
    return undefined
  }
  const threads = parseInteger(values.threads, 'threads', 1, 1024) ?? availableParallelism()
  const budget = parseSampleFlags(values)
  const sample = budget === undefined ? {} : { sample: budget }
  if (values['linger-ms'] === undefined && values['batch-size'] === undefined) return { threads, ...sample }
  const lingerMs = values['linger-ms'] === undefined ? [producer.lingerMs] : parseLingerList(values['linger-ms'])
  const batchSizeBytes =
    values['batch-size'] === undefined ? [producer.batchSizeBytes] : parseBatchSizeList(values['batch-size'])
  return { threads, ...sample, sweep: { lingerMs, batchSizeBytes } }
}

/** Beside the chart, FILE.batching.svg: the what-if heatmap for the recommended target (else the first). */
function writeBatchingHeatmap(report: CompareReport, chart: string): string | undefined {
  const sweep = report.projection?.sweep
  const target = report.recommendation?.target ?? report.targets[0]?.target
  if (sweep === undefined || sweep === null || target === undefined) return undefined
  const path = chart.replace(/(\.svg)?$/i, '.batching.svg')
  writeFileSync(path, renderBatchingHeatmapSvg(sweep, target, `squeeze compare: ${report.source.topic}`))
  return path
}

/** Fills the source topic; returns the times the input itself carries, the evidence for its ingest rate. */
async function fillSource(
  connection: KafkaConnectionConfig,
  log: Logger,
  topic: string,
  source: 'generate' | 'file',
  kind: LogKind,
  file: string | undefined,
  records: number | undefined,
  seed: number,
  signal: AbortSignal,
  progress: OnProgress,
  firstLines: readonly string[]
): Promise<RateEvidence> {
  // The source's own codec does not matter to the comparison (the copier re-batches every record); lz4:1 is cheap.
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'lz4', level: 1 } },
    { cluster: createCluster(connection, log), log }
  )
  await producer.start()
  try {
    const items =
      source === 'generate'
        ? generateRecords({ kind, seed, signal, ...(records === undefined ? {} : { records }) })
        : readFileLines(file as string, { follow: false, signal })
    const sample = new TimestampSample()
    const clock = source === 'file' ? lineClock(kind) : undefined
    const summary = await produceLogs({
      source: observeTimes(items, sample, clock),
      format: source === 'generate' ? null : formatFor(kind),
      topic,
      producer,
      onParseError: 'skip',
      log,
      signal,
      progressEvery: 1000,
      onProgress: (s) =>
        progress({
          phase: 'fill source',
          done: s.recordsSent,
          ...(records === undefined ? {} : { total: records }),
          unit: 'records'
        })
    })
    // No record is no comparison: the error says how the lines parsed, and as what they might.
    if (summary.recordsSent === 0 && !signal.aborted) {
      if (source === 'file') throw wrongKindError(kind, 0, summary.itemsRead, firstLines)
      throw new SqueezeError(ErrorCodes.SOURCE, 'the generator gave no records: nothing to compare')
    }
    if (clock !== undefined) sample.shift(clock.correctionMs())
    return { kind: 'sample', source: source === 'file' ? 'line-timestamps' : 'generator-timestamps', sample }
  } finally {
    await producer.close()
  }
}

/** Passes items on, noting each one's own time: a line's timestamp, a generated record's simulated clock. */
async function* observeTimes(
  items: AsyncIterable<SourceItem>,
  sample: TimestampSample,
  clock: LineClock | undefined
): AsyncGenerator<SourceItem> {
  for await (const item of items) {
    if (item.kind === 'record') {
      if (item.timestampMs !== undefined) sample.add(item.timestampMs)
      // Stamped when sent: the generator's clock starts in the past, and retention would delete such records mid-run.
      yield { kind: 'record', key: item.key, value: item.value }
      continue
    }
    const ms = clock?.read(item.line)
    if (ms !== undefined) sample.add(ms)
    yield item
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => compareMain(process.argv.slice(2)))
