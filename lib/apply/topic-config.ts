import { ErrorCodes, SqueezeError } from '../errors.js'
import type { CodecSpec } from '../codecs/index.js'

/** producer: the broker stores batches as written. codec: the topic names the codec, and the broker enforces it. */
export type TopicCompressionMode = 'producer' | 'codec'

export interface TopicConfigEntry {
  readonly name: string
  readonly value: string
}

/** The topic side of a change: the configs to set, what they make the broker do, and the command that sets them. */
export interface TopicConfigChoice {
  readonly mode: TopicCompressionMode
  readonly topic: string
  readonly configs: readonly TopicConfigEntry[]
  /** What the broker then does with arriving batches, and what producers must send. */
  readonly text: string
  /** kafka-configs.sh --alter, which sends IncrementalAlterConfigs. */
  readonly command: string
}

export function parseTopicMode(text: string | undefined): TopicCompressionMode {
  if (text === undefined || text === 'producer') return 'producer'
  if (text === 'codec') return 'codec'
  throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--topic-compression takes producer or codec, got "${text}"`)
}

/**
 * The topic configs for `spec`. The broker compares only the codec in a batch's attributes with the topic's
 * (LogValidator's in-place path): a batch in the topic's codec is kept as sent, whatever level it was written
 * at, and every other batch is decompressed and compressed again at the topic's codec and level.
 */
export function topicConfigFor(
  mode: TopicCompressionMode,
  spec: CodecSpec,
  topic: string,
  brokers: string
): TopicConfigChoice {
  const configs: TopicConfigEntry[] =
    mode === 'producer'
      ? [{ name: 'compression.type', value: 'producer' }]
      : [
          { name: 'compression.type', value: spec.codec },
          ...(spec.level === null ? [] : [{ name: `compression.${spec.codec}.level`, value: String(spec.level) }])
        ]
  const text =
    mode === 'producer'
      ? "compression.type=producer: the broker stores every batch as its producer wrote it; the producers' " +
        'settings above decide the codec and level'
      : `compression.type=${spec.codec}: the broker recompresses every batch that arrives in another codec (CPU ` +
        `on the leader for each ` +
        `produce request); producers must send ${spec.codec} to avoid a second compression, and a ${spec.codec} ` +
        `batch is kept as sent at ` +
        "whatever level its producer chose (a batch carries no level); the topic's level applies only to the " +
        'batches it recompresses'
  const command =
    `kafka-configs.sh --bootstrap-server ${brokers} --alter --entity-type topics --entity-name ${topic} ` +
    `--add-config ${configs.map((c) => `${c.name}=${c.value}`).join(',')}`
  return { mode, topic, configs, text, command }
}
