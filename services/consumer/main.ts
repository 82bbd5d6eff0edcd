import { writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { COMMON_HELP, COMMON_OPTIONS, connectionFrom, oneOf, parseCommandLine, serviceOptionsFrom } from '../../lib/config/cli.js'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../lib/consumer/partition-reader.js'
import { TopicMeasurements } from '../../lib/consumer/measure-topics.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { toDeadLetter } from '../../lib/protocol/dead-letter.js'
import { ErrorCodes, SqueezeError, errorMessage } from '../../lib/errors.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { createCluster, createKafkaClient } from '../../lib/kafka/connection.js'
import { bytesAllReplicas, describeLogDirs } from '../../lib/kafka/describe-log-dirs.js'
import { createConsumerGroupMetrics, createConsumerMetrics } from '../../lib/metrics/consumer-metrics.js'
import { consumerPropertiesFrom } from '../../lib/config/consumer-properties.js'
import { parseProperties } from '../../lib/config/producer-properties.js'
import { runGroupMember } from '../../lib/group/run-group-member.js'
import { renderConsumeReport } from '../../lib/report/consume-report.js'
import { terminalLayout } from '../../lib/report/terminal.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runService } from '../../lib/service/run-service.js'

export const CONSUME_HELP = `squeeze consume: read topics, decompress and decode every record, report bytes and CPU per topic.

Usage: squeeze consume --topic TOPIC[,TOPIC...] [options]

  --topic LIST                 topics to read (comma-separated or repeated)
  --format KIND|none           decode values as ${LOG_KINDS.join(', ')}, or none to skip decoding (default http)
  --from earliest|latest       where to start (default earliest)
  --follow                     keep reading new records; otherwise stop at the end offsets seen at start
  --group ID                   join consumer group ID: read only the partitions it assigns, from its committed
                               offsets (earliest when none), commit as you go; N instances split the partitions.
                               Without --follow a member stops once its partitions are read to their end.
  -X NAME=VALUE                consumer setting by Java client name (with --group): group.protocol=consumer|classic
                               (default consumer, KIP-848, on brokers that serve it), auto.commit.interval.ms (5000),
                               max.poll.interval.ms (300000), session.timeout.ms and heartbeat.interval.ms (classic)
  --isolation read_committed|read_uncommitted   (default read_committed)
  --json FILE                  also write the measurements as JSON
  --wide                       every column in the printed table (default: fit the terminal, else 100 columns)
  --dead-letter-topic TOPIC    also send every record that does not decode there, unchanged, with headers
                               squeeze.error, squeeze.error.code, squeeze.source.{topic,partition,offset}
${COMMON_HELP}

The summary table is printed at the end, or on Ctrl-C. Exit codes: 0 done; 1 runtime failure; 2 invalid arguments.`

const OPTIONS = {
  ...COMMON_OPTIONS,
  topic: { type: 'string', multiple: true },
  format: { type: 'string' },
  from: { type: 'string' },
  follow: { type: 'boolean' },
  group: { type: 'string' },
  X: { type: 'string', short: 'X', multiple: true },
  isolation: { type: 'string' },
  json: { type: 'string' },
  wide: { type: 'boolean' },
  'dead-letter-topic': { type: 'string' }
} as const

export async function consumeMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const flags = parseCommandLine(argv, OPTIONS, CONSUME_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  const topics = (values.topic ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '')
  if (topics.length === 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'missing --topic: name at least one topic to read')
  const service = serviceOptionsFrom(values)
  const consumerProperties = consumerPropertiesFrom(parseProperties(values.X ?? []))
  if (values.group === undefined && Object.keys(consumerProperties).length > 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '-X consumer settings apply to a group member: add --group')
  return runService({
    name: 'squeeze-consumer',
    service,
    configure: (log) => {
      const connection = connectionFrom(values, env, log)
      const formatName = oneOf(values.format, 'format', [...LOG_KINDS, 'none'] as const, 'http' as LogKind)
      const readerConfig = {
        ...DEFAULT_READER_CONFIG,
        topics,
        from: oneOf(values.from, 'from', ['earliest', 'latest'] as const, 'earliest'),
        untilEnd: values.follow !== true,
        partitions: values.group === undefined ? 'all' as const : 'assigned' as const,
        isolation: oneOf(values.isolation, 'isolation', ['read_committed', 'read_uncommitted'] as const, 'read_committed'),
        // TopicMeasurements keeps nothing from a batch past onBatch (dead letters are copies).
        reuseBatchMemory: true
      }
      return { connection, format: formatName === 'none' ? null : formatFor(formatName), readerConfig, shutdownTimeoutMs: 10_000 }
    },
    start: async ({ log, registry, signal, waitForCluster, connect, ready }, { connection, format, readerConfig }) => {
      const deadLetterTopic = values['dead-letter-topic']
      const deadLetters = deadLetterTopic === undefined ? undefined
        : new Producer({ ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'zstd', level: 3 }, lingerMs: 50 }, { cluster: createCluster(connection, log), log: log.child({ component: 'dead-letters' }) })
      const pending: Array<Promise<void>> = []
      const measurements = new TopicMeasurements(() => format, log.child({ component: 'measure' }), createConsumerMetrics(registry),
        deadLetters === undefined || deadLetterTopic === undefined ? undefined : (poison) => {
          pending.push(deadLetters.send({ topic: deadLetterTopic, ...toDeadLetter(poison) }))
        })
      const cluster = createCluster(connection, log)
      const admin = createKafkaClient(connection, log).admin()
      try {
        await waitForCluster(async () => {
          await connect(Promise.all([cluster.connect(), admin.connect()]))
          const existing = await admin.listTopics()
          const missing = topics.filter((t) => !existing.includes(t))
          if (missing.length > 0) throw new SqueezeError(ErrorCodes.SOURCE, `topic${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not found on the cluster`)
        })
        await deadLetters?.start()
        ready()
        const groupMetrics = createConsumerGroupMetrics(registry)
        const reader = new PartitionReader(readerConfig, { cluster, admin, log: log.child({ component: 'reader' }), lag: groupMetrics.lag })
        if (values.group === undefined) await reader.run(measurements, signal)
        else await runGroupMember({ groupId: values.group, topics, properties: consumerProperties }, { cluster, reader, log: log.child({ component: 'group' }), metrics: groupMetrics }, measurements, signal)
        await Promise.all(pending)
        await deadLetters?.close()
        if ((deadLetters?.snapshot().recordsFailed ?? 0) > 0) throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `some poison records could not be written to ${deadLetterTopic}`)
        for (const topic of topics) measurements.get(topic)
        const results = measurements.results()
        try {
          const sizes = await describeLogDirs(cluster, topics)
          for (const m of results) m.diskBytes = bytesAllReplicas(sizes.filter((s) => s.topic === m.topic))
        } catch (err) {
          log.warn({ err: errorMessage(err) }, 'cannot read on-disk sizes (DescribeLogDirs); reporting fetched bytes only')
        }
        process.stdout.write(`${renderConsumeReport(results, undefined, terminalLayout(process.stdout, values.wide === true))}\n`)
        if (values.json !== undefined) writeFileSync(values.json, JSON.stringify(results, null, 2))
        return 0
      } finally {
        await deadLetters?.close().catch(() => undefined)
        await Promise.allSettled([cluster.disconnect(), admin.disconnect()])
      }
    }
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCommand(() => consumeMain(process.argv.slice(2)))
