import { stat } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { formatCodecSpec, parseCodecSpec } from '../../lib/codecs/index.js'
import { COMMON_HELP, COMMON_OPTIONS, connectionFrom, oneOf, parseCommandLine, parseInteger, requireString, serviceOptionsFrom } from '../../lib/config/cli.js'
import { parseProperties, producerConfigFrom } from '../../lib/config/producer-properties.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { DETECT_LINES, KIND_CHOICES, readFirstLines, resolveKind, type KindChoice } from '../../lib/formats/detect-kind.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { createCluster, createKafkaClient } from '../../lib/kafka/connection.js'
import { BROKER_DEFAULT_REPLICATION_FACTOR, ensureTopic } from '../../lib/kafka/topics.js'
import { createDeliveryMetrics } from '../../lib/metrics/delivery-metrics.js'
import { createProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { peekLines } from '../../lib/pipeline/peek-lines.js'
import { produceLogs } from '../../lib/pipeline/produce-logs.js'
import { Producer } from '../../lib/producer/producer.js'
import { watchDelivery } from '../../lib/service/delivery-health.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runService } from '../../lib/service/run-service.js'
import { terminalLayout, wrapLines } from '../../lib/report/terminal.js'
import { Progress } from '../../lib/progress/progress.js'
import { readFileBatches, readFileChunks, readStdinLines } from '../../lib/sources/file-source.js'
import { parseRateSchedule } from '../../lib/sources/rate-schedule.js'
import type { LineChunk, SourceBatch, SourceItem } from '../../lib/sources/source.js'

export const PRODUCE_HELP = `squeeze produce: read or generate log records, batch them per partition, compress, send to Kafka.

Usage: squeeze produce --topic TOPIC [options]

Input:
  --source generate|file|stdin   where records come from (default generate)
  --kind KIND                    log kind: auto, ${LOG_KINDS.join(', ')} (default: auto for a file or stdin,
                                 detected from the first ${DETECT_LINES} lines; http for generate)
  --file PATH                    with --source file; access logs (combined format) become Cap'n Proto HTTP records
  --follow                       keep reading the file as it grows, across rotation (tail -F)
  --records N                    stop after N records (generate default 100000)
  --rate N                       generated records per second, stamped with the current time (default: as fast as
                                 possible, with modelled times ending now); N:S,M:T,... steps the rate: N a second
                                 for S seconds, then M for T, ... (the last rate holds after)
  --seed N                       generator seed (default 1): equal seeds give the same records, times aside
  --on-parse-error skip|raw      a line that does not parse is counted and skipped, or sent as raw text (default skip)
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
  file: { type: 'string' },
  follow: { type: 'boolean' },
  records: { type: 'string' },
  rate: { type: 'string' },
  seed: { type: 'string' },
  'on-parse-error': { type: 'string' },
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
      const producerConfig = producerConfigFrom(parseProperties(values.X ?? []), values.codec === undefined ? undefined : parseCodecSpec(values.codec))
      const sourceKind = oneOf(values.source, 'source', ['generate', 'file', 'stdin'] as const, 'generate')
      const settings = {
        connection, producerConfig, sourceKind,
        kind: oneOf<KindChoice>(values.kind, 'kind', KIND_CHOICES, sourceKind === 'generate' ? 'http' : 'auto'),
        records: parseInteger(values.records, 'records', 1) ?? (sourceKind === 'generate' ? 100_000 : undefined),
        rate: values.rate === undefined ? undefined : parseRateSchedule(values.rate),
        seed: parseInteger(values.seed, 'seed', 0, 2 ** 32 - 1) ?? 1,
        onParseError: oneOf(values['on-parse-error'], 'on-parse-error', ['skip', 'raw'] as const, 'skip'),
        createPartitions: parseInteger(values['create-partitions'], 'create-partitions', 1, 10000),
        replicationFactor: parseInteger(values['replication-factor'], 'replication-factor', 1, 100),
        shutdownTimeoutMs: producerConfig.deliveryTimeoutMs + 5000
      }
      if (sourceKind === 'file' && values.file === undefined) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'missing --file: --source file needs a path')
      if (sourceKind === 'generate' && settings.kind === 'auto') throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--kind auto applies to a file or stdin: name the kind to generate')
      return settings
    },
    start: async ({ log, registry, signal, waitForCluster, connect, ready }, { connection, producerConfig, sourceKind, kind: kindChoice, records, rate, seed, onParseError, createPartitions, replicationFactor }) => {
      // A file's or stdin's kind is checked against (or, for auto, read from) its first lines before anything connects.
      // Stdin is peeked only to detect its kind: with --kind given, a slow pipe's first lines go out as they come.
      const stdin = sourceKind === 'stdin' && kindChoice === 'auto' ? await peekLines(readStdinLines(signal), DETECT_LINES) : undefined
      const sample = sourceKind === 'file' ? await readFirstLines(values.file as string) : stdin?.lines ?? []
      const resolved = sourceKind === 'generate' ? { kind: kindChoice as LogKind } : resolveKind(kindChoice, sample, values.file ?? 'stdin')
      if (resolved.note !== undefined) log.info({ kind: resolved.kind }, resolved.note)
      const { kind } = resolved
      const producer = new Producer(producerConfig, { cluster: createCluster(connection, log), log: log.child({ component: 'producer' }), metrics: createProducerMetrics(registry) })
      // A file read once says how much is coming: a large one gets its compression thread at once, a small one none.
      if (sourceKind === 'file' && values.follow !== true) {
        const size = await stat(values.file as string).then((s) => s.size, () => undefined)
        if (size !== undefined) producer.expectInputBytes(size)
      }
      const delivery = watchDelivery(producer, { metrics: createDeliveryMetrics(registry), log })
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
          sourceKind === 'generate' ? (await import('../../lib/sources/generator-source.js')).generateRecordBatches({ kind, seed, signal, ...(records === undefined ? {} : { records }), ...(rate === undefined ? {} : { rateSchedule: rate }) })
          // A format that reads a line's bytes in place gets the file as read, undecoded and unsplit.
          : sourceKind === 'file' && values.follow !== true && records === undefined && formatFor(kind).writeLineBytes !== undefined ? readFileChunks(values.file as string, { signal })
          // A line's bytes serve a format whose record is the line itself (checkLine), not one that encodes it.
          : sourceKind === 'file' ? limit(readFileBatches(values.file as string, { follow: values.follow === true, lineBytes: formatFor(kind).checkLine !== undefined, signal }), records)
          : limit(oneByOne(stdin?.items ?? readStdinLines(signal)), records)
        log.info({ topic, codec: formatCodecSpec(producerConfig.codec), source: sourceKind, kind }, 'producing')
        const progress = new Progress({ stream: process.stderr, log, quiet: values.quiet === true })
        const summary = await produceLogs({
          source, format: sourceKind === 'generate' ? null : formatFor(kind), topic, producer, onParseError, log, signal, ready: connected,
          progressEvery: 1000,
          onProgress: (s) => progress.report({ phase: 'produce', done: s.recordsSent, ...(records === undefined ? {} : { total: records }), unit: 'records' })
        })
        progress.done()
        await producer.close()
        const stats = producer.snapshot()
        const ratio = stats.compressedBytes === 0 ? 0 : stats.uncompressedBytes / stats.compressedBytes
        process.stdout.write(`${wrapLines(
          `produced ${stats.recordsAcked} records to ${topic} with ${formatCodecSpec(producerConfig.codec)}: ${stats.batchesAcked} batches, ` +
          `${stats.uncompressedBytes} bytes uncompressed -> ${stats.compressedBytes} bytes sent (${ratio.toFixed(2)}x)\n` +
          `compression cpu ${stats.compressCpuSeconds.toFixed(3)} s; lines not parsed: ${summary.parseErrors} (${onParseError}), ` +
          `records too large: ${summary.rejected}, undelivered: ${stats.recordsFailed}`, terminalLayout(process.stdout, false))}\n`)
        return stats.recordsFailed > 0 ? 1 : 0
      } finally {
        await producer.close().catch(() => undefined)
      }
    }
  })
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

async function* oneByOne(items: AsyncIterable<SourceItem>): AsyncGenerator<SourceBatch> {
  for await (const item of items) yield [item]
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runCommand(() => produceMain(process.argv.slice(2)))
