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

/** Sampled value bytes per topic at most, so a topic of large values decides on fewer of them. */
export const FORMAT_SAMPLE_BYTES = 1 << 20

/** A topic still choosing: copies of its first values (their batches' buffers are not kept alive) and the kind so far. */
interface Sampling {
  readonly values: Array<readonly [Buffer, number, number]>
  bytes: number
  kind: LogKind | 'none' | undefined
}

/** Whether a topic's sample is whole: the choice made on it is final. */
function sampleWhole(sampling: Sampling): boolean {
  return sampling.values.length >= FORMAT_SAMPLE_VALUES || sampling.bytes >= FORMAT_SAMPLE_BYTES
}

/**
 * The format each topic's records are read as: the one given, or with `auto` the one its first values decode as
 * (guessFormat), chosen once per topic and said in the log. Topics written by other producers hold JSON or text
 * lines as often as squeeze's Cap'n Proto records; reading them all as one kind counted every record of the others
 * corrupt. The choice is final once FORMAT_SAMPLE_VALUES values (or FORMAT_SAMPLE_BYTES) are sampled, across as
 * many batches as that takes; until then each batch is read as the kind its topic's values so far decode as. A
 * topic's first records are often a few written by hand ("test") before its producer started, and a first batch
 * of them alone would decide the whole topic.
 */
export class TopicFormats {
  private readonly chosen = new Map<string, LogFormat | null>()
  private readonly sampling = new Map<string, Sampling>()

  constructor(
    private readonly choice: FormatChoice,
    private readonly log: Logger
  ) {}

  /** The format to decode `batch` of `topic` with; null: no decoding. */
  forBatch(topic: string, batch: ReadBatch): LogFormat | null {
    if (this.choice !== 'auto') return this.choice === 'none' ? null : formatFor(this.choice)
    const known = this.chosen.get(topic)
    if (known !== undefined) return known
    const sampling = this.sampling.get(topic) ?? { values: [], bytes: 0, kind: undefined }
    this.sampling.set(topic, sampling)
    batch.forEachValue((bytes, start, end) => {
      if (sampleWhole(sampling)) return
      sampling.values.push([Buffer.from(bytes.subarray(start, end)), 0, end - start])
      sampling.bytes += end - start
    })
    // Null values only (tombstones) say nothing: a later batch decides.
    if (sampling.values.length === 0) return null
    const guess = guessFormat(sampling.values)
    const format = guess.kind === 'none' ? null : formatFor(guess.kind)
    const final = sampleWhole(sampling)
    if (final) {
      this.chosen.set(topic, format)
      this.sampling.delete(topic)
    }
    if (guess.kind !== sampling.kind) this.say(topic, guess, final, sampling.kind !== undefined)
    sampling.kind = guess.kind
    return format
  }

  /** The choice in the log: when first made, and when more values change it. */
  private say(topic: string, guess: FormatGuess, final: boolean, changed: boolean): void {
    const { decoded, sampled } = guess
    const basis = final ? '' : ` (so far: ${sampled} values sampled)`
    if (guess.kind === 'none')
      this.log.warn(
        { topic, decoded, sampled, final },
        `--format auto: ${topic}'s records are none of the kinds squeeze decodes${basis}; measured without decoding (give --format to decode as one)`
      )
    else
      this.log.info(
        { topic, format: guess.kind, decoded, sampled, final },
        `--format auto: ${topic} reads as ${guess.kind}${changed ? ' now' : ''}${basis}`
      )
  }
}
