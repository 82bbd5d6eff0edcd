import { formatCodecSpec, type CodecName, type CodecSpec } from '../codecs/index.js'
import type { ClientName } from './client-limits.js'
import {
  JAVA_ESTIMATION_FACTOR,
  JAVA_LAG_BATCHES,
  JAVA_UNDRAINED_BATCHES,
  javaBatchSizeFor,
  javaBufferMemory,
  type JavaRun
} from './java-estimator.js'

/** The batching the measured figures assume, and the two figures that translate it into other clients' units. */
export interface BatchingTarget {
  readonly lingerMs: number
  /** Uncompressed bytes per batch at most, as squeeze's (and librdkafka's) batch.size counts them. */
  readonly batchSizeBytes: number
  /** The target's measured ratio (uncompressed / stored): what Java's compressed-size estimate divides by. */
  readonly ratio: number
  /** Mean uncompressed bytes per record: what record-count limits divide by. */
  readonly bytesPerRecord: number
  /**
   * The run the figures were measured on, batch by batch: with it Java's batch.size is the one at which Java's
   * own estimator, simulated over this run, makes batches of `meanBatchBytes` on average.
   */
  readonly java?: { readonly run: JavaRun; readonly meanBatchBytes: number; readonly partitions: number }
}

/** Where the settings point; placeholders when the report does not know (a file source's broker is a throwaway). */
export interface SettingsContext {
  readonly brokers: string
  readonly topic: string
}

export type SettingsFormat = 'properties' | 'go' | 'javascript' | 'logstash' | 'yaml' | 'toml' | 'fluent-bit' | 'shell'

/** Settings ready to paste, in the file format or code the client takes. */
export interface ClientSettings {
  readonly client: ClientName
  readonly target: string
  readonly format: SettingsFormat
  readonly text: string
  /** Why a value is what it is, where the client's units differ from squeeze's. */
  readonly notes: readonly string[]
}

/** librdkafka's message.max.bytes default: a batch.size above it needs it raised too. */
const LIBRDKAFKA_MESSAGE_MAX_BYTES = 1_000_000
/** librdkafka's batch.num.messages ceiling. */
const LIBRDKAFKA_MAX_BATCH_MESSAGES = 1_000_000

/**
 * Java's batch.size for batches of `b.batchSizeBytes` uncompressed bytes at the measured ratio. With the run
 * (`b.java`), the batch.size at which the simulated estimator makes batches of the run's mean size; without it,
 * the estimate settled at the measured ratio: a record is refused when the estimate plus the record's own
 * uncompressed size passes batch.size, so one mean record is added to the estimate.
 */
export function javaBatchSize(b: BatchingTarget, codec: CodecName): number {
  if (codec === 'none' || !(b.ratio > 0)) return b.batchSizeBytes
  if (b.java !== undefined) return javaBatchSizeFor(b.java.meanBatchBytes, b.java.run, JAVA_LAG_BATCHES)
  return Math.max(64, Math.ceil((b.batchSizeBytes * JAVA_ESTIMATION_FACTOR) / b.ratio) + Math.ceil(b.bytesPerRecord))
}

/** Records a batch of batchSizeBytes holds, twice over, so that a record-count limit never closes a batch first. */
export function recordsPerBatchLimit(b: BatchingTarget, ceiling = LIBRDKAFKA_MAX_BATCH_MESSAGES): number {
  const perBatch = b.bytesPerRecord > 0 ? Math.ceil(b.batchSizeBytes / b.bytesPerRecord) : 10_000
  return Math.min(ceiling, Math.max(1, 2 * perBatch))
}

/** The batching lines in the client's own names and units, without the codec: also the batching advice. */
export function batchingSettings(client: ClientName, b: BatchingTarget, codec: CodecName): string[] {
  switch (client) {
    case 'java':
      return [`linger.ms=${b.lingerMs}`, ...javaSizes(b, codec).map(([k, v]) => `${k}=${v}`)]
    case 'librdkafka':
      return librdkafkaBatching(b).map(([k, v]) => `${k}=${v}`)
    case 'franz-go':
      return [
        `kgo.ProducerLinger(${b.lingerMs} * time.Millisecond),`,
        `kgo.ProducerBatchMaxBytes(${b.batchSizeBytes}),`
      ]
    case 'sarama':
      return [
        `config.Producer.Flush.Frequency = ${b.lingerMs} * time.Millisecond`,
        `config.Producer.Flush.Bytes = ${b.batchSizeBytes}`,
        `config.Producer.MaxMessageBytes = ${Math.max(b.batchSizeBytes, LIBRDKAFKA_MESSAGE_MAX_BYTES)}`
      ]
    case 'kafkajs':
      return [
        `// about ${recordsPerBatchLimit(b) / 2} messages per producer.send() call: kafkajs sends one batch per ` +
          `partition per call`
      ]
    case 'logstash':
      return [`linger_ms => ${b.lingerMs}`, ...javaSizes(b, codec).map(([k, v]) => `${k.replace('.', '_')} => ${v}`)]
    case 'filebeat':
      return [`bulk_max_size: ${recordsPerBatchLimit(b) / 2}`, `bulk_flush_frequency: ${b.lingerMs}ms`]
    case 'vector':
      return librdkafkaBatching(b).map(([k, v]) => `"${k}" = "${v}"`)
    case 'fluent-bit':
      return librdkafkaBatching(b).map(([k, v]) => `rdkafka.${k} ${v}`)
    case 'squeeze':
      return [`-X linger.ms=${b.lingerMs}`, `-X batch.size=${b.batchSizeBytes}`]
  }
}

/** batch.size and, with the measured run, the buffer.memory that keeps Java's batches to the simulated ones. */
function javaSizes(b: BatchingTarget, codec: CodecName): Array<[string, number]> {
  const size = javaBatchSize(b, codec)
  if (b.java === undefined || codec === 'none') return [['batch.size', size]]
  return [
    ['batch.size', size],
    ['buffer.memory', javaBufferMemory(size, b.java.partitions)]
  ]
}

function librdkafkaBatching(b: BatchingTarget): Array<[string, number]> {
  return [
    ['linger.ms', b.lingerMs],
    ['batch.size', b.batchSizeBytes],
    ['batch.num.messages', recordsPerBatchLimit(b)],
    ...(b.batchSizeBytes > LIBRDKAFKA_MESSAGE_MAX_BYTES
      ? [['message.max.bytes', b.batchSizeBytes] as [string, number]]
      : [])
  ]
}

/** librdkafka's compression.codec and compression.level; lz4's fast compressor is its default level. */
function librdkafkaCodec(spec: CodecSpec): Array<[string, string]> {
  const level =
    spec.level === null || (spec.codec === 'lz4' && spec.level === 1)
      ? []
      : [['compression.level', String(spec.level)] as [string, string]]
  return [['compression.codec', spec.codec], ...level]
}

/** Java's compression.type and, where the level is not the codec's default, compression.<codec>.level (Kafka 3.8+). */
function javaCodec(spec: CodecSpec): string[] {
  const level =
    spec.level === null || (spec.codec === 'lz4' && spec.level === 1)
      ? []
      : [`compression.${spec.codec}.level=${spec.level}`]
  return [`compression.type=${spec.codec}`, ...level]
}

const GO_CODEC: Readonly<Record<CodecName, string>> = {
  none: 'NoCompression',
  gzip: 'GzipCompression',
  snappy: 'SnappyCompression',
  lz4: 'Lz4Compression',
  zstd: 'ZstdCompression'
}
const SARAMA_CODEC: Readonly<Record<CodecName, string>> = {
  none: 'CompressionNone',
  gzip: 'CompressionGZIP',
  snappy: 'CompressionSnappy',
  lz4: 'CompressionLZ4',
  zstd: 'CompressionZSTD'
}
const KAFKAJS_TYPE: Readonly<Record<CodecName, string>> = {
  none: 'None',
  gzip: 'GZIP',
  snappy: 'Snappy',
  lz4: 'LZ4',
  zstd: 'ZSTD'
}
const KAFKAJS_PLUGIN: Readonly<Partial<Record<CodecName, string>>> = {
  snappy: 'kafkajs-snappy',
  lz4: 'kafkajs-lz4',
  zstd: '@kafkajs/zstd'
}

/**
 * The settings that make `client` write `spec` at the batching `b`, as the client takes them. The caller
 * picks a spec the client can express (bestTargetPerClient); a level the client cannot set is written anyway
 * and would be refused by the client, never silently changed here.
 */
export function settingsFor(
  client: ClientName,
  spec: CodecSpec,
  b: BatchingTarget,
  ctx: SettingsContext
): ClientSettings {
  const target = formatCodecSpec(spec)
  const batching = batchingSettings(client, b, spec.codec)
  const { format, lines, notes = [] } = SETTINGS_TEXT[client]({ spec, target, b, ctx, batching })
  return { client, target, format, text: `${lines.join('\n')}\n`, notes }
}

/** What a client's settings are written from: the codec, its name, the batching and its lines, where to point. */
interface SettingsInput {
  readonly spec: CodecSpec
  readonly target: string
  readonly b: BatchingTarget
  readonly ctx: SettingsContext
  /** The batching lines in the client's own names (batchingSettings). */
  readonly batching: readonly string[]
}

/** A client's settings as lines of its format, and why a value is what it is where that needs saying. */
interface SettingsText {
  readonly format: SettingsFormat
  readonly lines: readonly string[]
  readonly notes?: readonly string[]
}

/** One writer per client: a client added to CLIENT_NAMES does not compile until it has one. */
const SETTINGS_TEXT: Readonly<Record<ClientName, (input: SettingsInput) => SettingsText>> = {
  java: ({ spec, b, ctx, batching }) => ({
    format: 'properties',
    lines: [`bootstrap.servers=${ctx.brokers}`, ...javaCodec(spec), ...batching],
    notes: javaNotes(spec, b)
  }),
  librdkafka: ({ spec, ctx, batching }) => ({
    format: 'properties',
    lines: [`bootstrap.servers=${ctx.brokers}`, ...librdkafkaCodec(spec).map(([k, v]) => `${k}=${v}`), ...batching]
  }),
  'franz-go': franzGoSettings,
  sarama: saramaSettings,
  kafkajs: ({ spec, ctx, batching }) => ({ format: 'javascript', lines: kafkajsLines(spec, ctx, batching) }),
  logstash: logstashSettings,
  filebeat: filebeatSettings,
  vector: vectorSettings,
  'fluent-bit': fluentBitSettings,
  squeeze: ({ target, ctx, batching }) => ({
    format: 'shell',
    lines: [`squeeze produce --brokers ${ctx.brokers} --topic ${ctx.topic} --codec ${target} ${batching.join(' ')}`]
  })
}

function franzGoSettings({ spec, ctx, batching }: SettingsInput): SettingsText {
  const level = spec.level === null || spec.codec === 'lz4' ? '' : `.WithLevel(${spec.level})`
  return {
    format: 'go',
    lines: [
      `kgo.SeedBrokers(${quote(ctx.brokers)}),`,
      `kgo.DefaultProduceTopic(${quote(ctx.topic)}),`,
      `kgo.ProducerBatchCompression(kgo.${GO_CODEC[spec.codec]}()${level}),`,
      ...batching
    ]
  }
}

function saramaSettings({ spec, batching }: SettingsInput): SettingsText {
  return {
    format: 'go',
    lines: [
      'config := sarama.NewConfig()',
      ...(spec.codec === 'zstd' ? ['config.Version = sarama.V2_1_0_0 // zstd needs Kafka 2.1+'] : []),
      `config.Producer.Compression = sarama.${SARAMA_CODEC[spec.codec]}`,
      ...(spec.level === null || spec.codec === 'lz4' ? [] : [`config.Producer.CompressionLevel = ${spec.level}`]),
      ...batching
    ]
  }
}

function logstashSettings({ spec, b, ctx, batching }: SettingsInput): SettingsText {
  return {
    format: 'logstash',
    lines: [
      'output {',
      '  kafka {',
      `    bootstrap_servers => ${quote(ctx.brokers)}`,
      `    topic_id => ${quote(ctx.topic)}`,
      `    compression_type => ${quote(spec.codec)}`,
      ...batching.map((l) => `    ${l}`),
      '  }',
      '}'
    ],
    notes: [
      `batch_size counts Java's compressed-size estimate, as the Java producer's batch.size does (${javaNote(b)})`
    ]
  }
}

function filebeatSettings({ spec, ctx, batching }: SettingsInput): SettingsText {
  return {
    format: 'yaml',
    lines: [
      'output.kafka:',
      `  hosts: [${quote(ctx.brokers)}]`,
      `  topic: ${quote(ctx.topic)}`,
      `  compression: ${spec.codec}`,
      ...(spec.codec === 'gzip' && spec.level !== null ? [`  compression_level: ${spec.level}`] : []),
      ...batching.map((l) => `  ${l}`)
    ],
    notes: ['bulk_max_size counts events: the records a batch of the measured size holds, at the mean record size']
  }
}

function vectorSettings({ spec, ctx, batching }: SettingsInput): SettingsText {
  return {
    format: 'toml',
    lines: [
      '[sinks.kafka_out]',
      'type = "kafka"',
      'inputs = ["my-source-or-transform-id"]',
      `bootstrap_servers = ${quote(ctx.brokers)}`,
      `topic = ${quote(ctx.topic)}`,
      `compression = ${quote(spec.codec)}`,
      'encoding.codec = "json"',
      '',
      '[sinks.kafka_out.librdkafka_options]',
      ...librdkafkaCodec(spec)
        .filter(([k]) => k !== 'compression.codec')
        .map(([k, v]) => `"${k}" = "${v}"`),
      ...batching
    ]
  }
}

function fluentBitSettings({ spec, ctx, batching }: SettingsInput): SettingsText {
  return {
    format: 'fluent-bit',
    lines: [
      '[OUTPUT]',
      '    Name    kafka',
      '    Match   *',
      `    Brokers ${ctx.brokers}`,
      `    Topics  ${ctx.topic}`,
      ...librdkafkaCodec(spec).map(([k, v]) => `    rdkafka.${k} ${v}`),
      ...batching.map((l) => `    ${l}`)
    ]
  }
}

function kafkajsLines(spec: CodecSpec, ctx: SettingsContext, batching: readonly string[]): string[] {
  const plugin = KAFKAJS_PLUGIN[spec.codec]
  const type = KAFKAJS_TYPE[spec.codec]
  return [
    `const { CompressionTypes${plugin === undefined ? '' : ', CompressionCodecs'} } = require('kafkajs')`,
    ...(plugin === undefined
      ? []
      : [
          `// ${spec.codec} is a plug-in: npm install ${plugin}, then register its codec as its README shows:`,
          `// CompressionCodecs[CompressionTypes.${type}] = <${plugin} codec>`
        ]),
    ...batching,
    `await producer.send({ topic: ${quote(ctx.topic)}, compression: CompressionTypes.${type}, messages })`
  ]
}

function javaNotes(spec: CodecSpec, b: BatchingTarget): string[] {
  const level =
    spec.level === null
      ? []
      : ["compression.<codec>.level needs Kafka clients 3.8 or later; older ones write the codec's default level"]
  return [...level, `batch.size counts Java's compressed-size estimate, not uncompressed bytes (${javaNote(b)})`]
}

function javaNote(b: BatchingTarget): string {
  if (b.java !== undefined) {
    return (
      `Java's estimate starts at ratio 1 and settles over the first batches, so batch.size is the one at which ` +
      `its estimator, simulated over this run's ${b.java.run.records} records and measured batch ratios, makes ` +
      `batches of ${Math.round(b.java.meanBatchBytes)} uncompressed bytes on average: the first ones smaller, ` +
      'later ones larger. buffer.memory holds one batch per partition and ' +
      `${JAVA_UNDRAINED_BATCHES} more (one per request in flight), so closed batches cannot pile up undrained at ` +
      'a stale estimate'
    )
  }
  return (
    `${b.batchSizeBytes} uncompressed bytes x 1.05 / the measured ratio ${b.ratio.toFixed(2)}, plus one mean ` +
    `record; the estimate starts at ratio 1 ` +
    "and improves by 0.005 per batch, so a new producer's first batches are smaller"
  )
}

function quote(text: string): string {
  return JSON.stringify(text)
}
