import { writeFileSync } from 'node:fs'
import type { Admin } from 'kafkajs'
import { pathToFileURL } from 'node:url'
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  connectionFrom,
  oneOf,
  parseCommandLine,
  serviceOptionsFrom
} from '../../lib/config/cli.js'
import { consumerPropertiesFrom } from '../../lib/config/consumer-properties.js'
import { parseProperties } from '../../lib/config/producer-properties.js'
import { splitReadSettings } from '../../lib/config/read-properties.js'
import { DEAD_LETTER_FAILURE_POLICIES, DeadLetters } from '../../lib/consumer/dead-letters.js'
import { addDiskBytes } from '../../lib/consumer/disk-sizes.js'
import { TopicFormats, type FormatChoice } from '../../lib/consumer/format-choice.js'
import { TopicMeasurements } from '../../lib/consumer/measure-topics.js'
import { DEFAULT_READER_CONFIG, PartitionReader, type ReaderHandlers } from '../../lib/consumer/partition-reader.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { LOG_KINDS } from '../../lib/formats/index.js'
import { runGroupMember } from '../../lib/group/run-group-member.js'
import { createCluster, createKafkaClient } from '../../lib/kafka/connection.js'
import type { KafkajsCluster } from '../../lib/kafka/kafkajs-internals.js'
import { missingTopicsError } from '../../lib/kafka/missing-topics.js'
import type { Logger } from '../../lib/log/logger.js'
import { createConsumerGroupMetrics, createConsumerMetrics } from '../../lib/metrics/consumer-metrics.js'
import { createReaderMetrics } from '../../lib/metrics/reader-metrics.js'
import { shutdownDeadlineMs } from '../../lib/producer/config.js'
import { DEFAULT_PRODUCER_CONFIG, Producer, type ProducerConfig } from '../../lib/producer/producer.js'
import { renderConsumeReport } from '../../lib/report/consume-report.js'
import { terminalLayout } from '../../lib/report/terminal.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runService, type ServiceContext } from '../../lib/service/run-service.js'

export const CONSUME_HELP = `squeeze consume: read topics, decompress and decode every record, report bytes and CPU per topic.

Usage: squeeze consume --topic TOPIC[,TOPIC...] [options]

  --topic LIST                 topics to read (comma-separated or repeated)
  --format KIND|none|auto      decode values as ${LOG_KINDS.join(', ')}, or none to skip decoding; auto (the
                               default): each topic as the kind its first records decode as, else none
  --from earliest|latest       where to start (default earliest)
  --follow                     keep reading new records; otherwise stop at the end offsets seen at start
  --group ID                   join consumer group ID: read only the partitions it assigns, from its committed
                               offsets (earliest when none), commit as you go; N instances split the partitions.
                               Without --follow a member stops once its partitions are read to their end.
                               A group with active members of other clients is refused: see --join-foreign-group
  --join-foreign-group         with --group: join a group whose active members are other clients' (an application's
                               group); squeeze then takes partitions from them and commits offsets they resume from
  -X NAME=VALUE                consumer setting by Java client name (with --group): group.protocol=consumer|classic
                               (default consumer, KIP-848, on brokers that serve it), auto.commit.interval.ms (5000),
                               max.poll.interval.ms (300000), session.timeout.ms and heartbeat.interval.ms (classic);
                               with or without --group: squeeze.max.batch.uncompressed.bytes, the most one batch may
                               decompress to (default 16 x the 8 MiB partition fetch = 128 MiB; larger batches are
                               skipped as corrupt, see docs/reliability.md)
  --isolation read_committed|read_uncommitted   (default read_committed)
  --json FILE                  also write the measurements as JSON
  --wide                       every column in the printed table (default: fit the terminal, else COLUMNS, else 100)
  --dead-letter-topic TOPIC    also send every record that does not decode there, unchanged, with headers
                               squeeze.error, squeeze.error.code, squeeze.source.{topic,partition,offset}; a batch
                               that does not read goes there as one record holding the stored batch (up to 512 KiB);
                               offsets are committed only once the copies before them are acknowledged
  --on-dead-letter-failure stop|skip
                               a copy that cannot be written (after the producer's retries) stops the
                               consumer with one line, committing nothing past it (default stop), or is counted (skip)
${COMMON_HELP}

The summary table is printed at the end, or on Ctrl-C. Exit codes: 0 done; 1 runtime failure; 2 invalid arguments.`

const OPTIONS = {
  ...COMMON_OPTIONS,
  topic: { type: 'string', multiple: true },
  format: { type: 'string' },
  from: { type: 'string' },
  follow: { type: 'boolean' },
  group: { type: 'string' },
  'join-foreign-group': { type: 'boolean' },
  X: { type: 'string', short: 'X', multiple: true },
  isolation: { type: 'string' },
  json: { type: 'string' },
  wide: { type: 'boolean' },
  'dead-letter-topic': { type: 'string' },
  'on-dead-letter-failure': { type: 'string' }
} as const

type ConsumeFlags = NonNullable<ReturnType<typeof parseCommandLine<typeof OPTIONS>>>['values']
type ConsumeSettings = ReturnType<typeof consumeSettings>

export async function consumeMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const flags = parseCommandLine(argv, OPTIONS, CONSUME_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  const topics = (values.topic ?? [])
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '')
  if (topics.length === 0)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'missing --topic: name at least one topic to read')
  const service = serviceOptionsFrom(values)
  const { read, rest } = splitReadSettings(parseProperties(values.X ?? []))
  const consumerProperties = consumerPropertiesFrom(rest)
  if (values.group === undefined && values['join-foreign-group'] === true)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--join-foreign-group applies to a group member: add --group')
  if (values.group === undefined && Object.keys(consumerProperties).length > 0)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '-X consumer settings apply to a group member: add --group')
  return runService({
    name: 'squeeze-consumer',
    service,
    configure: (log) => consumeSettings(values, { topics, read, consumerProperties }, env, log),
    start: consume
  })
}

/** The flags as one validated settings object: what to read and how, where dead letters go, what to write. */
function consumeSettings(
  values: ConsumeFlags,
  parsed: {
    topics: string[]
    read: ReturnType<typeof splitReadSettings>['read']
    consumerProperties: ReturnType<typeof consumerPropertiesFrom>
  },
  env: NodeJS.ProcessEnv,
  log: Logger
) {
  const { topics, read, consumerProperties } = parsed
  const connection = connectionFrom(values, env, log)
  const format = oneOf(values.format, 'format', [...LOG_KINDS, 'none', 'auto'] as const, 'auto' as FormatChoice)
  const isolations = ['read_committed', 'read_uncommitted'] as const
  const readerConfig = {
    ...DEFAULT_READER_CONFIG,
    topics,
    from: oneOf(values.from, 'from', ['earliest', 'latest'] as const, 'earliest'),
    untilEnd: values.follow !== true,
    partitions: values.group === undefined ? ('all' as const) : ('assigned' as const),
    isolation: oneOf(values.isolation, 'isolation', isolations, 'read_committed'),
    // TopicMeasurements keeps nothing from a batch past onBatch (dead letters are copies).
    reuseBatchMemory: true,
    ...read
  }
  const policies = DEAD_LETTER_FAILURE_POLICIES
  const onDeadLetterFailure = oneOf(values['on-dead-letter-failure'], 'on-dead-letter-failure', policies, 'stop')
  const deadLetterTopic = values['dead-letter-topic']
  // The dead-letter copies are flushed on shutdown: their producer's delivery and request timeouts bound that wait.
  const deadLetterFlushMs = deadLetterTopic === undefined ? 0 : shutdownDeadlineMs(DEAD_LETTER_PRODUCER)
  const shutdownTimeoutMs = 10_000 + deadLetterFlushMs
  const output = { json: values.json, wide: values.wide === true }
  const group =
    values.group === undefined
      ? undefined
      : {
          groupId: values.group,
          topics,
          properties: consumerProperties,
          // A group of squeeze's own is told by its members' client id.
          ownClientId: values['join-foreign-group'] === true ? undefined : connection.clientId
        }
  const deadLetters = { topic: deadLetterTopic, onFailure: onDeadLetterFailure }
  return { connection, topics, format, readerConfig, group, deadLetters, shutdownTimeoutMs, output }
}

/** Reads every topic (or the group's share of it), measures it, and prints the table; dead letters are settled first. */
async function consume(context: ServiceContext, settings: ConsumeSettings): Promise<number> {
  const { log, registry, waitForCluster, connect, ready } = context
  const { connection, topics, format } = settings
  // A dead-letter copy that cannot be written stops the reading as a signal would, and settle() then throws.
  const stopped = new AbortController()
  const signal = AbortSignal.any([context.signal, stopped.signal])
  const consumerMetrics = createConsumerMetrics(registry)
  const dead = openDeadLetters(settings, log, stopped, consumerMetrics)
  const deadLetters = dead?.copies
  const formats = new TopicFormats(format, log.child({ component: 'format' }))
  const measurements = new TopicMeasurements(
    (topic, batch) => formats.forBatch(topic, batch),
    log.child({ component: 'measure' }),
    consumerMetrics,
    deadLetters === undefined ? undefined : (poison) => deadLetters.add(poison)
  )
  const cluster = createCluster(connection, log)
  const admin = createKafkaClient(connection, log).admin()
  try {
    await waitForCluster(async () => {
      await connect(Promise.all([cluster.connect(), admin.connect()]))
      const missing = missingTopicsError(await admin.listTopics(), topics, {
        where: connection.brokers.join(','),
        list: true
      })
      if (missing !== undefined) throw missing
    })
    await dead?.producer.start()
    ready()
    const handlers = deadLetters === undefined ? measurements : deadLetters.wrap(measurements)
    await readTopics(context, settings, { cluster, admin, signal, deadLetters }, handlers)
    await deadLetters?.settle()
    await dead?.producer.close()
    for (const topic of topics) measurements.get(topic)
    const results = measurements.results()
    await addDiskBytes(cluster, topics, results, log)
    const layout = terminalLayout(process.stdout, settings.output.wide)
    process.stdout.write(`${renderConsumeReport(results, undefined, layout)}\n`)
    const skipped = deadLetters?.skipped ?? 0
    if (skipped > 0) process.stdout.write(`dead-letter copies not written: ${skipped} (skip)\n`)
    if (settings.output.json !== undefined) writeFileSync(settings.output.json, JSON.stringify(results, null, 2))
    return 0
  } finally {
    await dead?.producer.close().catch(() => undefined)
    await Promise.allSettled([cluster.disconnect(), admin.disconnect()])
  }
}

/** The dead-letter topic's producer and copies, with --dead-letter-topic; none without. */
function openDeadLetters(
  settings: ConsumeSettings,
  log: Logger,
  stopped: AbortController,
  metrics: ReturnType<typeof createConsumerMetrics>
): { readonly producer: Producer; readonly copies: DeadLetters } | undefined {
  const { topic, onFailure } = settings.deadLetters
  if (topic === undefined) return undefined
  const producer = new Producer(DEAD_LETTER_PRODUCER, {
    cluster: createCluster(settings.connection, log),
    log: log.child({ component: 'dead-letters' })
  })
  const copies = new DeadLetters(topic, onFailure, {
    producer,
    log: log.child({ component: 'dead-letters' }),
    onStop: () => stopped.abort(),
    skipped: (n) => metrics.deadLettersSkipped(n)
  })
  return { producer, copies }
}

/** Every partition of the topics, or with --group the ones the group assigns, until their end or a stop. */
async function readTopics(
  { log, registry }: ServiceContext,
  settings: ConsumeSettings,
  clients: { cluster: KafkajsCluster; admin: Admin; signal: AbortSignal; deadLetters: DeadLetters | undefined },
  handlers: ReaderHandlers
): Promise<void> {
  const { cluster, admin, signal, deadLetters } = clients
  const groupMetrics = createConsumerGroupMetrics(registry)
  const reader = new PartitionReader(settings.readerConfig, {
    cluster,
    admin,
    log: log.child({ component: 'reader' }),
    lag: groupMetrics.lag,
    metrics: createReaderMetrics(registry)
  })
  if (settings.group === undefined) return reader.run(handlers, signal)
  const settleOption = deadLetters === undefined ? {} : { settle: () => deadLetters.settle() }
  const member = { cluster, reader, log: log.child({ component: 'group' }), metrics: groupMetrics, ...settleOption }
  await runGroupMember(settings.group, member, handlers, signal)
}

/** The dead-letter producer's settings: the copies are few, so a short linger. */
const DEAD_LETTER_PRODUCER: ProducerConfig = {
  ...DEFAULT_PRODUCER_CONFIG,
  codec: { codec: 'zstd', level: 3 },
  lingerMs: 50
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => consumeMain(process.argv.slice(2)))
