import { hostname } from 'node:os'
import { pathToFileURL } from 'node:url'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
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
import { copierGroupProperties } from '../../lib/config/consumer-properties.js'
import { parseProperties, producerConfigFrom } from '../../lib/config/producer-properties.js'
import { splitReadSettings } from '../../lib/config/read-properties.js'
import { createReaderMetrics } from '../../lib/metrics/reader-metrics.js'
import { COPIER_PRODUCER_DEFAULTS, COPY_BATCHING, Copier, REFUSED_POLICIES } from '../../lib/copier/copier.js'
import type { CopierConfig } from '../../lib/copier/copier-config.js'
import { prepareDestinations } from '../../lib/copier/destinations.js'
import { DEFAULT_TARGETS, parseTargets } from '../../lib/copier/targets.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { GroupCoordinator } from '../../lib/group/coordinator.js'
import { refuseForeignGroup } from '../../lib/group/member.js'
import { createCluster, createKafkaClient } from '../../lib/kafka/connection.js'
import { createCopierMetrics } from '../../lib/metrics/copier-metrics.js'
import { createProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { shutdownDeadlineMs } from '../../lib/producer/config.js'
import { Producer } from '../../lib/producer/producer.js'
import { copySummary } from '../../lib/report/copy-summary.js'
import { terminalLayout, wrapLines } from '../../lib/report/terminal.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runService, type ServiceContext } from '../../lib/service/run-service.js'
import type { Logger } from '../../lib/log/logger.js'

export const COPY_HELP = `squeeze copy: mirror a source topic into one topic per codec/level (same partitions, keys, values,
headers, timestamps), so every codec is compared on identical traffic.

Usage: squeeze copy --topic SOURCE [options]

  --topic SOURCE            source topic (must exist)
  --targets LIST            codec[:level] list (default ${DEFAULT_TARGETS.join(',')})
  --destination TEMPLATE    destination name; {source} and {target} are replaced (default {source}.{target}, e.g. logs.zstd-3)
  --group ID                consumer group of the source (default squeeze-copier.<source>); run more copies to scale out:
                            they split the source partitions (KIP-848 group protocol where the brokers have it, else classic)
  --join-foreign-group      join a --group whose active members are other clients' (default: refuse, as the copier
                            would take partitions from them and commit offsets they resume from)
  --exactly-once            Kafka transactions: each destination holds each source record once for read_committed readers;
                            the offsets in each transaction carry the copier's group member id and epoch (KIP-447)
  --transactional-id ID     with --exactly-once: this instance's id, unique among running copiers and stable across
                            its restarts (default squeeze-copier.<group>.<hostname>; see docs/usage.md, "Scaling the copier")
  --batching source|rebatch each source batch becomes one batch per target, its records compressed again with the
                            target's codec (source, the default); or records are re-batched at the targets' linger.ms
                            and batch.size, as compare does (rebatch)
  --commit-interval-ms MS   how often source offsets are committed (default 1000)
  --session-timeout-ms MS   classic group protocol only: a dead copier's partitions move after it (default 10000);
                            under KIP-848 the brokers' group.consumer.session.timeout.ms applies
  --until-end               stop once the source's end offsets at start are copied (default: keep following)
  --records N, --bytes N    stop after N source records / uncompressed bytes
  --on-refused fail|skip|dead-letter
                            a record a destination refuses as it is (over its max.message.bytes, INVALID_RECORD):
                            stop the copy, count and skip it, or write it to --dead-letter-topic; skip and
                            dead-letter commit past it (at-least-once only). Default dead-letter with
                            --dead-letter-topic, else fail. A source batch that cannot be read (corrupt, or over
                            squeeze.max.batch.uncompressed.bytes) follows the same policy
  --dead-letter-topic TOPIC refused records go there unchanged, with headers squeeze.error, squeeze.error.code,
                            squeeze.source.{topic,partition,offset}, squeeze.destination.topic (created if missing)
  -X NAME=VALUE             producer settings by Kafka name, for every target (linger.ms, batch.size, buffer.memory, ...);
                            squeeze.compression.threads (1; 0 on one core: 0 compresses inline);
                            and group.protocol=consumer|classic, max.poll.interval.ms (the rebalance timeout);
                            squeeze.max.batch.uncompressed.bytes: the most one source batch may decompress to
                            (default 16 x max(256 KiB partition fetch, 1 MiB) = 16 MiB)
${COMMON_HELP}

Exit codes: 0 done; 1 runtime failure; 2 invalid arguments.`

const OPTIONS = {
  ...COMMON_OPTIONS,
  topic: { type: 'string' },
  targets: { type: 'string' },
  destination: { type: 'string' },
  group: { type: 'string' },
  'join-foreign-group': { type: 'boolean' },
  'exactly-once': { type: 'boolean' },
  'transactional-id': { type: 'string' },
  'commit-interval-ms': { type: 'string' },
  batching: { type: 'string' },
  'session-timeout-ms': { type: 'string' },
  'until-end': { type: 'boolean' },
  records: { type: 'string' },
  bytes: { type: 'string' },
  'on-refused': { type: 'string' },
  'dead-letter-topic': { type: 'string' },
  X: { type: 'string', short: 'X', multiple: true }
} as const

type CopyFlags = NonNullable<ReturnType<typeof parseCommandLine<typeof OPTIONS>>>['values']
type CopySettings = ReturnType<typeof copySettings>

export async function copyMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  installKafkajsDecoders()
  const flags = parseCommandLine(argv, OPTIONS, COPY_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  const source = requireString(values.topic, 'topic', 'name the source topic')
  return runService({
    name: 'squeeze-copier',
    service: serviceOptionsFrom(values),
    configure: (log) => copySettings(values, source, env, log),
    start: copy
  })
}

/** The flags as one validated settings object: the copier's configuration, its producer's, and where to connect. */
function copySettings(values: CopyFlags, source: string, env: NodeJS.ProcessEnv, log: Logger) {
  const connection = connectionFrom(values, env, log)
  const targets = parseTargets(values.targets ?? DEFAULT_TARGETS.join(','), source, values.destination)
  const { read, rest } = splitReadSettings(parseProperties(values.X ?? []))
  const { producer, group } = copierGroupProperties(rest)
  const warn = (message: string): void => log.warn(message)
  const producerConfig = producerConfigFrom(producer, undefined, COPIER_PRODUCER_DEFAULTS, warn)
  const groupId = values.group ?? `squeeze-copier.${source}`
  const deadLetterTopic = values['dead-letter-topic']
  const exactlyOnce = values['exactly-once'] === true
  const batching = oneOf(values.batching, 'batching', COPY_BATCHING, 'source')
  const transactionalId = values['transactional-id'] ?? `squeeze-copier.${groupId}.${hostname()}`
  const commitIntervalMs = parseInteger(values['commit-interval-ms'], 'commit-interval-ms', 10, 3_600_000) ?? 1000
  const maxRecords = parseInteger(values.records, 'records', 1)
  const sessionTimeoutMs = parseInteger(values['session-timeout-ms'], 'session-timeout-ms', 1000, 3_600_000)
  const maxBytes = parseInteger(values.bytes, 'bytes', 1)
  const onRefusedDefault = deadLetterTopic === undefined ? 'fail' : 'dead-letter'
  const onRefused = oneOf(values['on-refused'], 'on-refused', REFUSED_POLICIES, onRefusedDefault)
  if (deadLetterTopic !== undefined && (deadLetterTopic === source || targets.some((t) => t.topic === deadLetterTopic)))
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--dead-letter-topic ${deadLetterTopic} is the source or a destination; name a topic of its own`
    )
  const copier: CopierConfig = {
    sourceTopic: source,
    groupId,
    targets,
    exactlyOnce,
    batching,
    commitIntervalMs,
    stopAtEnd: values['until-end'] === true,
    onRefused,
    ...read,
    ...(group['group.protocol'] === undefined ? {} : { groupProtocol: group['group.protocol'] }),
    ...(group['max.poll.interval.ms'] === undefined ? {} : { rebalanceTimeoutMs: group['max.poll.interval.ms'] }),
    ...(deadLetterTopic === undefined ? {} : { deadLetterTopic }),
    ...(sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs }),
    ...(maxRecords === undefined ? {} : { maxRecords }),
    ...(maxBytes === undefined ? {} : { maxBytes })
  }
  // The flush, then the last offset commit (the coordinator's retries).
  const shutdownTimeoutMs = shutdownDeadlineMs(producerConfig) + 5000
  // A group of squeeze's own is told by its members' client id.
  const ownClientId = values['join-foreign-group'] === true ? undefined : connection.clientId
  return { connection, producerConfig, transactionalId, copier, ownClientId, shutdownTimeoutMs }
}

/** Connects, creates the destinations where missing, copies until done or stopped, and prints what was copied. */
async function copy(context: ServiceContext, settings: CopySettings): Promise<number> {
  const { log, registry, signal, waitForCluster, connect, ready } = context
  const { connection, copier: config } = settings
  const { targets, deadLetterTopic } = config
  const admin = createKafkaClient(connection, log).admin()
  const sourceCluster = createCluster(connection, log)
  // One coordinator for the group check and the copier's membership: one FindCoordinator.
  const coordinator = new GroupCoordinator(sourceCluster, config.groupId)
  const producer = new Producer(
    { ...settings.producerConfig, topicCodecs: Object.fromEntries(targets.map((t) => [t.topic, t.spec])) },
    {
      cluster: createCluster(connection, log),
      log: log.child({ component: 'producer' }),
      metrics: createProducerMetrics(registry),
      ...(config.exactlyOnce ? { transactionalId: settings.transactionalId } : {})
    }
  )
  try {
    await waitForCluster(async () => {
      await connect(Promise.all([admin.connect(), sourceCluster.connect()]))
      // Before any destination is created: a refused start leaves no topic behind.
      if (settings.ownClientId !== undefined)
        await refuseForeignGroup(coordinator, config.groupId, settings.ownClientId)
      const created = await prepareDestinations(admin, config.sourceTopic, targets, deadLetterTopic)
      if (created.length > 0) log.info({ topics: created }, 'created destination topics')
      await producer.start()
    })
    const copier = new Copier(config, {
      cluster: sourceCluster,
      coordinator,
      admin,
      producer,
      log: log.child({ component: 'copier' }),
      metrics: createCopierMetrics(registry),
      readerMetrics: createReaderMetrics(registry),
      onProgress: (s) => log.debug({ records: s.sourceRecords, commits: s.commits }, 'progress')
    })
    ready()
    await copier.run(signal)
    await producer.close()
    const refusals = { onRefused: config.onRefused ?? 'fail', deadLetterTopic }
    const text = copySummary(config.sourceTopic, targets, copier.snapshot(), refusals)
    process.stdout.write(`${wrapLines(text, terminalLayout(process.stdout, false))}\n`)
    return 0
  } finally {
    await producer.close().catch(() => undefined)
    await Promise.allSettled([admin.disconnect(), sourceCluster.disconnect()])
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => copyMain(process.argv.slice(2)))
