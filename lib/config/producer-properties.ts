import { z } from 'zod'
import { isAdaptive, LEVEL_RANGES, resolveCodecSpec, type CodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { adaptiveRange } from '../producer/adaptive-level.js'
import { DEFAULT_PRODUCER_CONFIG, type AdaptiveLevelSettings, type ProducerConfig } from '../producer/config.js'
import { validateConfig } from './validate.js'

const int = (min: number, max: number) =>
  z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be a whole number').min(min).max(max)

/** Producer settings under Kafka's names, as given with -X name=value. Unknown names are rejected. */
const producerPropertiesSchema = z
  .object({
    'linger.ms': int(0, 3_600_000),
    'batch.size': int(64, 64 * 1024 * 1024),
    'buffer.memory': int(1024, 8 * 1024 * 1024 * 1024),
    'max.request.size': int(1024, 256 * 1024 * 1024),
    acks: z.enum(['all', '-1', '0', '1']),
    'enable.idempotence': z.enum(['true', 'false']),
    'delivery.timeout.ms': int(1, 24 * 3_600_000),
    'request.timeout.ms': int(1, 3_600_000),
    'retry.backoff.ms': int(0, 600_000),
    'retry.backoff.max.ms': int(0, 3_600_000),
    'max.in.flight.requests.per.connection': int(1, 5),
    'squeeze.compression.level.min': z.coerce
      .number({ invalid_type_error: 'must be a number' })
      .int('must be a whole number'),
    'squeeze.compression.level.max': z.coerce
      .number({ invalid_type_error: 'must be a number' })
      .int('must be a whole number'),
    'squeeze.compression.cpu.budget': z.coerce
      .number({ invalid_type_error: 'must be a number' })
      .positive('must be above 0 (CPU seconds per GiB)'),
    'squeeze.compression.threads': int(0, 256),
    'squeeze.compression.inline.seconds': z.coerce
      .number({ invalid_type_error: 'must be a number' })
      .min(0, 'must be 0 or more (CPU seconds)')
      .max(3600),
    'compression.type': z.string(),
    'compression.gzip.level': int(LEVEL_RANGES.gzip?.min ?? 1, LEVEL_RANGES.gzip?.max ?? 9),
    'compression.lz4.level': z.coerce.number().int(),
    'compression.zstd.level': z.coerce.number().int()
  })
  .partial()
  .strict()

export type ProducerProperties = z.infer<typeof producerPropertiesSchema>

/** Parses `name=value` pairs (the -X flags) into a properties object. */
export function parseProperties(pairs: readonly string[]): Record<string, string> {
  const properties: Record<string, string> = {}
  const bad: string[] = []
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    if (eq <= 0) bad.push(pair)
    else properties[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim()
  }
  if (bad.length > 0) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `invalid -X ${bad.map((b) => `"${b}"`).join(', ')}: write name=value, e.g. -X linger.ms=100`
    )
  }
  return properties
}

/**
 * Builds a producer config from Kafka-named properties, and `codec` (the --codec flag) when given.
 * compression.type with compression.<codec>.level is the Kafka way; --codec zstd:3 is shorthand for both.
 * `serviceDefaults` replaces squeeze's defaults where a service needs others (the copier compresses inline).
 */
export function producerConfigFrom(
  properties: Record<string, string>,
  codec?: CodecSpec,
  serviceDefaults: Pick<Partial<ProducerConfig>, 'compressionThreads'> = {},
  warn: (message: string) => void = () => undefined
): ProducerConfig {
  const props = validateConfig(producerPropertiesSchema, properties, 'producer settings')
  let spec: CodecSpec
  if (codec !== undefined) {
    if (props['compression.type'] !== undefined && props['compression.type'] !== codec.codec) {
      throw new SqueezeError(
        ErrorCodes.CONFIG_INVALID,
        `--codec ${codec.codec} contradicts -X compression.type=${props['compression.type']}: give one of them`
      )
    }
    spec = codec
  } else {
    const type = props['compression.type'] ?? DEFAULT_PRODUCER_CONFIG.codec.codec
    const levelKey = `compression.${type}.level` as keyof ProducerProperties
    const level = props[levelKey] as number | undefined
    spec = resolveCodecSpec(
      type,
      type === 'none' || type === 'snappy'
        ? undefined
        : (level ?? (type === DEFAULT_PRODUCER_CONFIG.codec.codec ? DEFAULT_PRODUCER_CONFIG.codec.level : undefined))
    )
  }
  const acks =
    props.acks === undefined
      ? DEFAULT_PRODUCER_CONFIG.acks
      : props.acks === 'all'
        ? -1
        : (Number(props.acks) as -1 | 0 | 1)
  const idempotent =
    props['enable.idempotence'] === undefined
      ? DEFAULT_PRODUCER_CONFIG.idempotent
      : props['enable.idempotence'] === 'true'
  if (idempotent && acks !== -1) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `enable.idempotence=true requires acks=all (got acks=${acks}); set -X enable.idempotence=false to use acks=${acks}`
    )
  }
  const config: ProducerConfig = {
    lingerMs: props['linger.ms'] ?? DEFAULT_PRODUCER_CONFIG.lingerMs,
    batchSizeBytes: props['batch.size'] ?? DEFAULT_PRODUCER_CONFIG.batchSizeBytes,
    bufferMemoryBytes: props['buffer.memory'] ?? DEFAULT_PRODUCER_CONFIG.bufferMemoryBytes,
    maxRequestSizeBytes: props['max.request.size'] ?? DEFAULT_PRODUCER_CONFIG.maxRequestSizeBytes,
    acks,
    idempotent,
    deliveryTimeoutMs: deliveryTimeout(props, warn),
    requestTimeoutMs: props['request.timeout.ms'] ?? DEFAULT_PRODUCER_CONFIG.requestTimeoutMs,
    retryBackoffMs: props['retry.backoff.ms'] ?? DEFAULT_PRODUCER_CONFIG.retryBackoffMs,
    retryBackoffMaxMs: props['retry.backoff.max.ms'] ?? DEFAULT_PRODUCER_CONFIG.retryBackoffMaxMs,
    maxInFlightPerPartition:
      props['max.in.flight.requests.per.connection'] ?? DEFAULT_PRODUCER_CONFIG.maxInFlightPerPartition,
    compressionThreads:
      props['squeeze.compression.threads'] ??
      serviceDefaults.compressionThreads ??
      DEFAULT_PRODUCER_CONFIG.compressionThreads,
    compressionInlineSeconds:
      props['squeeze.compression.inline.seconds'] ?? DEFAULT_PRODUCER_CONFIG.compressionInlineSeconds,
    codec: spec,
    ...adaptiveSettings(props, spec)
  }
  if (config.bufferMemoryBytes < config.batchSizeBytes) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `buffer.memory (${config.bufferMemoryBytes}) must be at least batch.size (${config.batchSizeBytes})`
    )
  }
  return Object.freeze(config)
}

/**
 * Java's rule, kept as Java keeps it: a batch must get at least one full request before its delivery timeout. A
 * delivery.timeout.ms given below linger.ms + request.timeout.ms is refused with Java's message; the default is
 * raised to that sum, with a warning. The shutdown deadline is derived from these values (shutdownDeadlineMs).
 */
function deliveryTimeout(props: ProducerProperties, warn: (message: string) => void): number {
  const lingerMs = props['linger.ms'] ?? DEFAULT_PRODUCER_CONFIG.lingerMs
  const floor = lingerMs + (props['request.timeout.ms'] ?? DEFAULT_PRODUCER_CONFIG.requestTimeoutMs)
  const given = props['delivery.timeout.ms']
  const rule = 'delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms'
  if (given !== undefined) {
    if (given < floor) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `${rule} (got ${given} < ${floor})`)
    return given
  }
  if (DEFAULT_PRODUCER_CONFIG.deliveryTimeoutMs >= floor) return DEFAULT_PRODUCER_CONFIG.deliveryTimeoutMs
  warn(`${rule}. Setting it to ${floor}.`)
  return floor
}

/** squeeze.compression.level.min/max and cpu.budget, for codec:adaptive (checked against the codec here, at start-up). */
function adaptiveSettings(props: ProducerProperties, spec: CodecSpec): { adaptiveLevel?: AdaptiveLevelSettings } {
  const settings: AdaptiveLevelSettings = {
    ...(props['squeeze.compression.level.min'] === undefined ? {} : { min: props['squeeze.compression.level.min'] }),
    ...(props['squeeze.compression.level.max'] === undefined ? {} : { max: props['squeeze.compression.level.max'] }),
    ...(props['squeeze.compression.cpu.budget'] === undefined
      ? {}
      : { cpuBudgetSecondsPerGiB: props['squeeze.compression.cpu.budget'] })
  }
  if (isAdaptive(spec)) adaptiveRange(spec.codec, settings.min, settings.max)
  return Object.keys(settings).length === 0 ? {} : { adaptiveLevel: Object.freeze(settings) }
}
