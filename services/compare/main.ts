import { squeezeVersion } from '../../lib/service/version.js'
import { availableParallelism } from 'node:os'
import { pathToFileURL } from 'node:url'
import { applyTopicConfig } from '../../lib/apply/apply-topic.js'
import { CLIENT_NAMES, parseClients, targetsNeededFor } from '../../lib/apply/client-limits.js'
import { compareVerdicts } from '../../lib/apply/compare-verdicts.js'
import type { ApplyAs } from '../../lib/apply/apply-as.js'
import { parseTopicMode } from '../../lib/apply/topic-config.js'
import { formatCodecSpec } from '../../lib/codecs/index.js'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import type { ProjectionModeOptions } from '../../lib/compare/compare-mode.js'
import { runCompareSession, type CompareSessionSettings } from '../../lib/compare/compare-session.js'
import { parseBatchSizeList, parseLingerList, parseSampleFlags } from '../../lib/compare/projection/sweep-flags.js'
import { DEFAULT_RATE_LOOKBACK_MS } from '../../lib/compare/topic-rate.js'
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  connectionFrom,
  oneOf,
  parseCommandLine,
  parseInteger,
  serviceOptionsFrom
} from '../../lib/config/cli.js'
import { parseProperties, producerConfigFrom } from '../../lib/config/producer-properties.js'
import { splitReadSettings } from '../../lib/config/read-properties.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../lib/copier/copier.js'
import { DEFAULT_TARGETS, parseTargets } from '../../lib/copier/targets.js'
import { findSqueezeRoot } from '../../lib/embedded-broker/kafka-jars.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { KIND_CHOICES, type KindChoice } from '../../lib/formats/detect-kind.js'
import { LOG_KINDS } from '../../lib/formats/index.js'
import { createCluster, type KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import type { Logger } from '../../lib/log/logger.js'
import type { ProducerConfig } from '../../lib/producer/producer.js'
import { writeCompareReports, type CompareOutputOptions } from '../../lib/report/compare-output.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runOneShot } from '../../lib/service/run-service.js'

export const COMPARE_HELP = `squeeze compare: copy one topic into a topic per codec/level, read every copy back, and report what each
codec costs (CPU) and saves (bytes on the broker), with a recommendation.

Usage: squeeze compare --topic SOURCE --brokers HOST:PORT [options]
         an existing topic on your cluster
       squeeze compare --topic SOURCE --brokers HOST:PORT --mode projection [options]
         read-only: needs only Read and Describe on SOURCE
       squeeze compare --source generate|file [--kind KIND] [--file PATH] [options]
         fills a source topic first; without --brokers a checkout starts its own broker
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
                             ${CLIENT_NAMES.join(', ')};
                             targets a client needs are added (zstd:12 beside zstd:19 for librdkafka)
  --show-settings            print each client's settings to paste (always in --json applyAs and --markdown)
  --topic-compression producer|codec   the topic side: keep compression.type=producer (default) or set the codec
  --apply-topic-config       with --topic: set those topic configs (IncrementalAlterConfigs, after a validated dry run)
  --wide                     every column in the printed report (default: fit the terminal, else COLUMNS,
                             else 100 columns); --json and --markdown always hold every field
  --quiet                    no progress line on stderr
${CONNECTION_HELP}

Bytes/day saved use the source's own ingest rate: a topic's offsets by timestamp (else its records' timestamps),
a file's line timestamps, the generator's clock. Without one the report says so and gives savings per GiB of input.

Ctrl-C ends the copy and prints a partial report. Exit codes: 0 done; 1 runtime failure; 2 invalid arguments.`

const OPTIONS = {
  ...CONNECTION_OPTIONS,
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

type Values = NonNullable<ReturnType<typeof parseCommandLine<typeof OPTIONS>>>['values']
type SourceKind = CompareSessionSettings['sourceKind']

function invalid(message: string): SqueezeError {
  return new SqueezeError(ErrorCodes.CONFIG_INVALID, message)
}

function positiveNumber(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw invalid(`--${flag} must be a positive number, got "${value}"`)
  return n
}

export async function compareMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  installKafkajsDecoders()
  const flags = parseCommandLine(argv, OPTIONS, COMPARE_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  return runOneShot({
    name: 'squeeze-compare',
    service: serviceOptionsFrom({ ...values, 'log-level': values['log-level'] ?? 'warn' }),
    configure: (log) => compareSettings(values, env, log),
    start: async ({ log, signal, connect }, settings) => {
      const session = { log, signal, connect, stderr: process.stderr, quiet: values.quiet === true }
      return runCompareSession(settings, session, async ({ outcome, connection, filled }) => {
        const brokers = filled ? undefined : connection.brokers.join(',')
        const apply = compareVerdicts(outcome, settings, settings.compare, brokers)
        const stdio = { stdout: process.stdout, stderr: process.stderr }
        const code = writeCompareReports(outcome, apply, settings.added, outputOptions(values), stdio)
        if (values['apply-topic-config'] === true) await applyRecommended(apply, connection, log)
        return code
      })
    }
  })
}

/** Every flag checked once, in the order the errors are reported. */
function compareSettings(values: Values, env: NodeJS.ProcessEnv, log: Logger) {
  const source = sourceFlags(values)
  const { sourceKind, kind } = source
  const { read, rest } = splitReadSettings(parseProperties(values.X ?? []))
  const producer = producerConfigFrom(rest, undefined, COPIER_PRODUCER_DEFAULTS)
  const budget = budgetFlags(values, sourceKind)
  const seed = parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 42
  const projection = projectionFlags(values, producer)
  if (projection !== undefined && budget.durationS !== undefined)
    throw invalid('--duration-s applies to --mode copy; bound a projection with --records or --bytes')
  const explicitBrokers = values.brokers ?? (env.KAFKA_BROKERS === '' ? undefined : env.KAFKA_BROKERS)
  if (sourceKind === 'topic' && explicitBrokers === undefined)
    throw invalid('missing --brokers: comparing an existing topic needs its cluster (or set KAFKA_BROKERS)')
  if (explicitBrokers === undefined && findSqueezeRoot() === undefined) throw invalid(NO_LOCAL_KAFKA)
  const sourceTopic = values.topic ?? `squeeze-compare.${kind}.${Date.now()}`
  const clients = parseClients(values.client)
  const topicMode = parseTopicMode(values['topic-compression'])
  if (values['apply-topic-config'] === true && sourceKind !== 'topic')
    throw invalid('--apply-topic-config needs --topic: it changes a topic')
  const { targets, added } = targetsFor(values, sourceTopic, clients)
  const { maxRecords, maxBytes, durationS, cpuBudget, targetRatio, rateWindowH } = budget
  return {
    ...source,
    file: values.file,
    partitions: budget.partitions,
    seed,
    sourceTopic,
    projection,
    clients,
    topicMode,
    added,
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
      // The session sets the format once the source's kind is known.
      format: null,
      producer,
      ...(maxRecords === undefined ? {} : { maxRecords }),
      ...(maxBytes === undefined ? {} : { maxBytes }),
      ...(durationS === undefined ? {} : { durationMs: durationS * 1000 }),
      keepTopics: values['keep-topics'] === true,
      consumers: budget.consumers,
      read,
      ...(cpuBudget === undefined ? {} : { cpuBudgetSecondsPerGiB: cpuBudget }),
      ...(targetRatio === undefined ? {} : { targetRatio }),
      version: squeezeVersion()
    },
    shutdownTimeoutMs: 120_000
  }
}

/** --topic or --source, the kind of logs, and the format the destinations are decoded as. */
function sourceFlags(
  values: Values
): Pick<CompareSessionSettings, 'sourceKind' | 'kind' | 'formatName' | 'formatFollowsKind'> {
  const sourceKind: SourceKind =
    values.topic !== undefined ? 'topic' : oneOf(values.source, 'source', ['generate', 'file'] as const, 'generate')
  if (values.topic !== undefined && values.source !== undefined)
    throw invalid('give either --topic (an existing topic) or --source, not both')
  if (sourceKind === 'file' && values.file === undefined) throw invalid('missing --file: --source file needs a path')
  const kind = oneOf<KindChoice>(values.kind, 'kind', KIND_CHOICES, sourceKind === 'file' ? 'auto' : 'http')
  if (kind === 'auto' && sourceKind !== 'file')
    throw invalid('--kind auto applies to --source file: name the kind to generate')
  const formatName = oneOf(
    values.format,
    'format',
    [...LOG_KINDS, 'none'] as const,
    sourceKind === 'topic' ? 'none' : kind === 'auto' ? 'none' : kind
  )
  return { sourceKind, kind, formatName, formatFollowsKind: values.format === undefined && sourceKind !== 'topic' }
}

/** How much is read, and what the recommendation and the savings are weighed by. */
function budgetFlags(values: Values, sourceKind: SourceKind) {
  const partitions = parseInteger(values.partitions, 'partitions', 1, 1000) ?? 3
  const maxRecords = parseInteger(values.records, 'records', 1) ?? (sourceKind === 'generate' ? 50_000 : undefined)
  const maxBytes = parseInteger(values.bytes, 'bytes', 1)
  const durationS = positiveNumber(values['duration-s'], 'duration-s')
  const cpuBudget = positiveNumber(values['cpu-budget'], 'cpu-budget')
  const targetRatio = positiveNumber(values['target-ratio'], 'target-ratio')
  const consumers = parseInteger(values.consumers, 'consumers', 0, 10000) ?? 1
  const rateWindowH = positiveNumber(values['rate-window-h'], 'rate-window-h')
  if (rateWindowH !== undefined && sourceKind !== 'topic')
    throw invalid(
      "--rate-window-h applies to --topic only: a filled source's rate comes from its lines' or the generator's timestamps"
    )
  if (rateWindowH !== undefined && values.sample !== undefined)
    throw invalid(
      "--rate-window-h does not apply with --sample: a sample's rate is measured over the time span it covers"
    )
  return { partitions, maxRecords, maxBytes, durationS, cpuBudget, targetRatio, consumers, rateWindowH }
}

/** --targets, plus the levels a named --client needs to be given its best. */
function targetsFor(values: Values, sourceTopic: string, clients: ReturnType<typeof parseClients>) {
  const named = parseTargets(values.targets ?? DEFAULT_TARGETS.join(','), sourceTopic, values.destination)
  const added = targetsNeededFor(
    named.map((t) => t.spec),
    clients
  )
  const withAdded = [...named.map((t) => t.spec), ...added].map(formatCodecSpec).join(',')
  const targets = added.length === 0 ? named : parseTargets(withAdded, sourceTopic, values.destination)
  return { targets, added: added.map(formatCodecSpec) }
}

/** --mode projection's settings, checked once; undefined in copy mode, where the projection flags are refused. */
function projectionFlags(values: Values, producer: ProducerConfig): ProjectionModeOptions | undefined {
  const mode = oneOf(values.mode, 'mode', ['copy', 'projection'] as const, 'copy')
  if (mode === 'copy') {
    const misplaced = (['threads', 'sample', 'sample-windows', 'linger-ms', 'batch-size'] as const).filter(
      (flag) => values[flag] !== undefined
    )
    if (misplaced.length > 0)
      throw invalid(
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

/** The files and the printed form asked for. */
function outputOptions(values: Values): CompareOutputOptions {
  return {
    json: values.json,
    markdown: values.markdown,
    chart: values.chart,
    showSettings: values['show-settings'] === true,
    wide: values.wide === true
  }
}

/** --apply-topic-config: the verdict's topic configs, set after a validated dry run. */
async function applyRecommended(apply: ApplyAs, connection: KafkaConnectionConfig, log: Logger): Promise<void> {
  const { topic } = apply
  if (topic === null) {
    const why =
      apply.keep === null
        ? 'nothing was recommended'
        : `the verdict is to keep ${apply.keep}, which no target beats by the margin`
    process.stderr.write(`squeeze: --apply-topic-config: ${why}, so no topic config was changed\n`)
    return
  }
  const cluster = createCluster(connection, log)
  await cluster.connect()
  try {
    await applyTopicConfig(cluster, topic, (line) => process.stdout.write(`${line}\n`))
  } finally {
    await cluster.disconnect().catch(() => undefined)
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => compareMain(process.argv.slice(2)))
