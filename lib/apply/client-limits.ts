import { formatCodecSpec, isAdaptive, LEVEL_RANGES, type CodecName, type CodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'

/** The Kafka producers and log shippers `--client` names, in the order reports list them. */
export const CLIENT_NAMES = [
  'java',
  'librdkafka',
  'franz-go',
  'sarama',
  'kafkajs',
  'logstash',
  'filebeat',
  'vector',
  'fluent-bit',
  'squeeze'
] as const
export type ClientName = (typeof CLIENT_NAMES)[number]

/**
 * What one client can set for one codec, in squeeze's level numbering (lz4:1 is the fast compressor, lz4:N
 * LZ4HC at N). `levels` null: the client has no level setting and always writes `fixed`.
 */
export interface CodecLimit {
  readonly levels: {
    readonly min: number
    readonly max: number
    readonly except?: readonly number[]
    readonly also?: readonly number[]
  } | null
  /** The level written without a level setting; null for codecs that have no levels. */
  readonly fixed: number | null
}

export interface ClientLimits {
  readonly name: ClientName
  /** What it is, in a few words: "Kafka's Java producer (3.8+)". */
  readonly label: string
  readonly codecs: Readonly<Partial<Record<CodecName, CodecLimit>>>
  /** Where the limit is written down, and the version it was read for. */
  readonly source: string
  /** A caveat the figures carry for this client, or null. */
  readonly caveat: string | null
}

const NO_LEVEL: CodecLimit = { levels: null, fixed: null }
const fixed = (level: number): CodecLimit => ({ levels: null, fixed: level })
const LIBRDKAFKA_URL = 'https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md'

/**
 * librdkafka's compression.level takes -1..12 whatever the codec (gzip 0..9, lz4 0..12, zstd up to 12). LZ4F
 * levels below 3 are its fast compressor, so lz4 says 1 (fast) or 3..12 (LZ4HC).
 */
const LIBRDKAFKA_CODECS: ClientLimits['codecs'] = {
  none: NO_LEVEL,
  gzip: { levels: { min: 1, max: 9 }, fixed: 6 },
  snappy: NO_LEVEL,
  lz4: { levels: { min: 3, max: 12, also: [1] }, fixed: 1 },
  zstd: { levels: { min: 1, max: 12 }, fixed: 3 }
}

/** franz-go and Sarama: gzip and zstd levels through pure-Go libraries; lz4 at its fast default only. */
const PURE_GO_CODECS: ClientLimits['codecs'] = {
  none: NO_LEVEL,
  gzip: { levels: { min: 1, max: 9 }, fixed: 6 },
  snappy: NO_LEVEL,
  lz4: fixed(1),
  zstd: { levels: { min: 1, max: 22 }, fixed: 3 }
}

function pureGoCaveat(client: string): string {
  return (
    `${client} compresses with pure-Go libraries (klauspost/compress): a zstd level maps onto four encoder ` +
    "speeds, so its stored sizes differ from libzstd's figures here"
  )
}

/**
 * Every client's compression limits. Levels are what each client's own documentation or source accepts;
 * `squeeze` takes what its own producer takes.
 */
export const CLIENT_LIMITS: Readonly<Record<ClientName, ClientLimits>> = {
  java: {
    name: 'java',
    label: "Kafka's Java producer (3.8+, KIP-390 levels)",
    // Java's compression.lz4.level 9 is its default and selects the fast compressor, so LZ4HC 9 cannot be set.
    codecs: {
      none: NO_LEVEL,
      gzip: { levels: { min: 1, max: 9 }, fixed: 6 },
      snappy: NO_LEVEL,
      lz4: { levels: { min: 1, max: 17, except: [9] }, fixed: 1 },
      zstd: { levels: { min: LEVEL_RANGES.zstd?.min ?? -131072, max: 22 }, fixed: 3 }
    },
    source:
      'https://cwiki.apache.org/confluence/display/KAFKA/KIP-390%3A+Support+Compression+Level (Kafka 3.8+; ' +
      'checked against kafka-clients 4.1.1)',
    caveat: 'before Kafka 3.8 the Java producer has no level setting: gzip 6, lz4 fast, zstd 3 only'
  },
  librdkafka: {
    name: 'librdkafka',
    label: 'librdkafka (kcat, confluent-kafka-*, rsyslog omkafka)',
    codecs: LIBRDKAFKA_CODECS,
    source:
      `${LIBRDKAFKA_URL} (compression.level -1..12; a wider zstd range is confluentinc/librdkafka#5223, ` + `unmerged)`,
    caveat: null
  },
  'franz-go': {
    name: 'franz-go',
    label: 'franz-go (kgo)',
    codecs: PURE_GO_CODECS,
    source:
      'https://pkg.go.dev/github.com/twmb/franz-go/pkg/kgo (ProducerBatchCompression, ZstdCompression().WithLevel)',
    caveat: pureGoCaveat('franz-go')
  },
  sarama: {
    name: 'sarama',
    label: 'IBM Sarama',
    codecs: PURE_GO_CODECS,
    source: 'https://pkg.go.dev/github.com/IBM/sarama#Config (Producer.Compression, Producer.CompressionLevel)',
    caveat: pureGoCaveat('Sarama')
  },
  kafkajs: {
    name: 'kafkajs',
    label: 'kafkajs',
    // gzip is built in at zlib's default; snappy, lz4 and zstd come from codec plug-ins at their default level.
    codecs: { none: NO_LEVEL, gzip: fixed(6), snappy: NO_LEVEL, lz4: fixed(1), zstd: fixed(3) },
    source:
      'https://kafka.js.org/docs/producing#compression (gzip built in; snappy, lz4, zstd through codec ' +
      'plug-ins; no level)',
    caveat: 'kafkajs has no level setting and no batching setting: one request per send() call'
  },
  logstash: {
    name: 'logstash',
    label: 'Logstash kafka output',
    codecs: { none: NO_LEVEL, gzip: fixed(6), snappy: NO_LEVEL, lz4: fixed(1), zstd: fixed(3) },
    source:
      'https://www.elastic.co/guide/en/logstash/current/plugins-outputs-kafka.html (compression_type; zstd ' +
      'since logstash-integration-kafka 10.10.0)',
    caveat: 'Logstash has no level setting: its Java client writes gzip 6, lz4 fast, zstd 3'
  },
  filebeat: {
    name: 'filebeat',
    label: 'Filebeat / Elastic Agent kafka output',
    codecs: { none: NO_LEVEL, gzip: { levels: { min: 1, max: 9 }, fixed: 4 }, snappy: NO_LEVEL, lz4: fixed(1) },
    source:
      'https://www.elastic.co/guide/en/beats/filebeat/current/kafka-output.html (compression, compression_level ' +
      'gzip only; no zstd: elastic/beats#24534)',
    caveat: null
  },
  vector: {
    name: 'vector',
    label: 'Vector kafka sink (librdkafka)',
    codecs: LIBRDKAFKA_CODECS,
    source:
      'https://vector.dev/docs/reference/configuration/sinks/kafka/ (compression; the level only through ' +
      'librdkafka_options)',
    caveat: null
  },
  'fluent-bit': {
    name: 'fluent-bit',
    label: 'Fluent Bit out_kafka (librdkafka)',
    codecs: LIBRDKAFKA_CODECS,
    source: 'https://docs.fluentbit.io/manual/pipeline/outputs/kafka (rdkafka.* passes librdkafka properties)',
    caveat: 'zstd depends on the librdkafka Fluent Bit was built with (fluent/fluent-bit#2479)'
  },
  squeeze: {
    name: 'squeeze',
    label: 'squeeze produce / copy',
    codecs: {
      none: NO_LEVEL,
      gzip: { levels: { min: 1, max: 9 }, fixed: 6 },
      snappy: NO_LEVEL,
      lz4: { levels: { min: 1, max: 17 }, fixed: 1 },
      zstd: { levels: { min: LEVEL_RANGES.zstd?.min ?? -131072, max: 22 }, fixed: 3 }
    },
    source: 'docs/producer.md (--codec CODEC[:LEVEL])',
    caveat: null
  }
}

/** --client java,librdkafka or all: known names, no repeats; every client when the list is all. */
export function parseClients(text: string | undefined): ClientName[] {
  const names = (text ?? 'all')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '')
  if (names.length === 0 || (names.length === 1 && names[0] === 'all')) return [...CLIENT_NAMES]
  const unknown = names.filter((n) => !(CLIENT_NAMES as readonly string[]).includes(n))
  if (unknown.length > 0)
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `unknown --client ${unknown.join(', ')}: use all or any of ${CLIENT_NAMES.join(', ')}`
    )
  if (new Set(names).size !== names.length)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--client names the same client twice')
  return names as ClientName[]
}

/**
 * Every level the client can write for a codec, lowest first; [] when it has no such codec, [null] when the
 * codec has no levels.
 */
export function expressibleLevels(client: ClientName, codec: CodecName): Array<number | null> {
  const limit = CLIENT_LIMITS[client].codecs[codec]
  if (limit === undefined) return []
  if (limit.levels === null) return [limit.fixed]
  const { min, max, except = [], also = [] } = limit.levels
  // zstd's negative levels run to -131072: only the ones a target can name matter, so the range starts at -7.
  const from = Math.max(min, -7)
  const levels = new Set<number>(also)
  for (let level = from; level <= max; level++) if (!except.includes(level)) levels.add(level)
  return [...levels].sort((a, b) => a - b)
}

/** Can this client write batches exactly as the spec compresses them? codec:adaptive is squeeze's own. */
export function canExpress(client: ClientName, spec: CodecSpec): boolean {
  if (isAdaptive(spec)) return client === 'squeeze'
  const limit = CLIENT_LIMITS[client].codecs[spec.codec]
  if (limit === undefined) return false
  if (spec.level === null) return true
  if (limit.levels === null) return spec.level === limit.fixed
  const { min, max, except = [], also = [] } = limit.levels
  return also.includes(spec.level) || (spec.level >= min && spec.level <= max && !except.includes(spec.level))
}

/**
 * The spec of the same codec this client can write that is nearest to `spec`: the highest level at or under
 * it, else the lowest above. Null when the client lacks the codec or the spec is adaptive.
 */
export function nearestExpressible(client: ClientName, spec: CodecSpec): CodecSpec | null {
  if (isAdaptive(spec)) return null
  if (canExpress(client, spec)) return spec
  const levels = expressibleLevels(client, spec.codec)
  if (levels.length === 0) return null
  const numeric = levels.filter((l): l is number => l !== null)
  if (numeric.length === 0 || spec.level === null) return { codec: spec.codec, level: levels[0] ?? null }
  const target = spec.level
  const below = numeric.filter((l) => l <= target)
  return { codec: spec.codec, level: below.length > 0 ? (below[below.length - 1] as number) : (numeric[0] as number) }
}

/**
 * Targets to measure besides `specs` so that every named client has its own nearest row: zstd:12 beside
 * zstd:19 for librdkafka. Only new specs, in the order first needed.
 */
export function targetsNeededFor(specs: readonly CodecSpec[], clients: readonly ClientName[]): CodecSpec[] {
  const known = new Set(specs.map(formatCodecSpec))
  const added: CodecSpec[] = []
  for (const spec of specs) {
    for (const client of clients) {
      const nearest = nearestExpressible(client, spec)
      if (nearest === null || known.has(formatCodecSpec(nearest))) continue
      known.add(formatCodecSpec(nearest))
      added.push(nearest)
    }
  }
  return added
}
