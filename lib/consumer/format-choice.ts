import { formatFor, LOG_KINDS, type LogFormat, type LogKind } from '../formats/index.js'
import { rangeDecoder } from '../formats/log-format.js'
import type { Logger } from '../log/logger.js'
import type { ReadBatch } from '../protocol/record-batch-reader.js'

/** What `consume --format` names: a kind, `none` (no decoding), or `auto` (each topic's own, read from its records). */
export type FormatChoice = LogKind | 'none' | 'auto'

/** How many of a topic's first values each format is tried on, to choose the one to read the topic as. */
export const FORMAT_SAMPLE_VALUES = 200

export interface FormatGuess {
  /** The kind most sampled values decode as, or `none` when no kind decodes half of them. */
  readonly kind: LogKind | 'none'
  readonly decoded: number
  readonly sampled: number
}

/**
 * The kind that decodes the most of `values` (each `bytes[start, end)`), as the consumer will decode them; ties go
 * to the kind listed first in LOG_KINDS, which puts the narrower first (a dnsmasq line is also a syslog line).
 * Under half of them decoding is `none`: the records are measured without a decode that would count them corrupt.
 */
export function guessFormat(values: ReadonlyArray<readonly [Buffer, number, number]>): FormatGuess {
  let best: FormatGuess = { kind: 'none', decoded: 0, sampled: values.length }
  for (const kind of LOG_KINDS) {
    const decode = rangeDecoder(formatFor(kind))
    let decoded = 0
    for (const [bytes, start, end] of values) if (decodes(decode, bytes, start, end)) decoded++
    if (decoded > best.decoded) best = { kind, decoded, sampled: values.length }
  }
  return best.decoded > 0 && best.decoded * 2 >= best.sampled ? best : { ...best, kind: 'none' }
}

function decodes(decode: ReturnType<typeof rangeDecoder>, bytes: Buffer, start: number, end: number): boolean {
  try {
    decode(bytes, start, end)
    return true
  } catch {
    return false
  }
}

/**
 * The format each topic's records are read as: the one given, or with `auto` the one its first batch of records
 * decodes as (guessFormat), chosen once per topic and said once in the log. Topics written by other producers hold
 * JSON or text lines as often as squeeze's Cap'n Proto records; reading them all as one kind counted every record
 * of the others corrupt.
 */
export class TopicFormats {
  private readonly chosen = new Map<string, LogFormat | null>()

  constructor(
    private readonly choice: FormatChoice,
    private readonly log: Logger
  ) {}

  /** The format to decode `batch` of `topic` with; null: no decoding. */
  forBatch(topic: string, batch: ReadBatch): LogFormat | null {
    if (this.choice !== 'auto') return this.choice === 'none' ? null : formatFor(this.choice)
    const known = this.chosen.get(topic)
    if (known !== undefined) return known
    const sample: Array<readonly [Buffer, number, number]> = []
    batch.forEachValue((bytes, start, end) => {
      if (sample.length < FORMAT_SAMPLE_VALUES) sample.push([bytes, start, end])
    })
    // A batch of null values only (tombstones) says nothing: the next one decides.
    if (sample.length === 0) return null
    const guess = guessFormat(sample)
    const format = guess.kind === 'none' ? null : formatFor(guess.kind)
    this.chosen.set(topic, format)
    const { decoded, sampled } = guess
    if (guess.kind === 'none')
      this.log.warn(
        { topic, decoded, sampled },
        `--format auto: ${topic}'s records are none of the kinds squeeze decodes; measured without decoding (give --format to decode as one)`
      )
    else
      this.log.info({ topic, format: guess.kind, decoded, sampled }, `--format auto: ${topic} reads as ${guess.kind}`)
    return format
  }
}
