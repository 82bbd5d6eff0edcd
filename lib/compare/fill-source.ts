import { SqueezeError, ErrorCodes } from '../errors.js'
import { wrongKindError } from '../formats/detect-kind.js'
import { formatFor, type LogKind } from '../formats/index.js'
import { lineClock, type LineClock } from '../formats/line-time.js'
import { createCluster, type KafkaConnectionConfig } from '../kafka/connection.js'
import type { Logger } from '../log/logger.js'
import { produceLogs } from '../pipeline/produce-logs.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../producer/producer.js'
import type { OnProgress } from '../progress/progress.js'
import { readFileLines } from '../sources/file-source.js'
import { generateRecords } from '../sources/generator-source.js'
import type { SourceItem } from '../sources/source.js'
import { TimestampSample } from './ingest-rate.js'
import type { RateEvidence } from './run-compare.js'

/** Where a filled source topic's records come from; `records` bounds the generator and is the progress total. */
export type FillInput = { readonly kind: LogKind; readonly records?: number | undefined } & (
  | { readonly source: 'generate'; readonly seed: number }
  | {
      readonly source: 'file'
      readonly file: string
      /** The file's first lines, read to detect its kind: the error for a file that parses to nothing quotes them. */
      readonly firstLines: readonly string[]
    }
)

export interface FillContext {
  readonly connection: KafkaConnectionConfig
  readonly log: Logger
  readonly signal: AbortSignal
  readonly onProgress: OnProgress
}

/** Fills the source topic; returns the times the input itself carries, the evidence for its ingest rate. */
export async function fillSource(topic: string, input: FillInput, ctx: FillContext): Promise<RateEvidence> {
  const { log, signal } = ctx
  // The source's own codec does not matter to the comparison (the copier re-batches every record); lz4:1 is cheap.
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'lz4', level: 1 } },
    { cluster: createCluster(ctx.connection, log), log }
  )
  await producer.start()
  try {
    const { records } = input
    const items =
      input.source === 'generate'
        ? generateRecords({ kind: input.kind, seed: input.seed, signal, ...(records === undefined ? {} : { records }) })
        : readFileLines(input.file, { follow: false, signal })
    const sample = new TimestampSample()
    const clock = input.source === 'file' ? lineClock(input.kind) : undefined
    const summary = await produceLogs({
      source: observeTimes(items, sample, clock),
      format: input.source === 'generate' ? null : formatFor(input.kind),
      topic,
      producer,
      onParseError: 'skip',
      log,
      signal,
      progressEvery: 1000,
      onProgress: (s) =>
        ctx.onProgress({
          phase: 'fill source',
          done: s.recordsSent,
          ...(records === undefined ? {} : { total: records }),
          unit: 'records'
        })
    })
    // No record is no comparison: the error says how the lines parsed, and as what they might.
    if (summary.recordsSent === 0 && !signal.aborted) {
      if (input.source === 'file') throw wrongKindError(input.kind, 0, summary.itemsRead, input.firstLines)
      throw new SqueezeError(ErrorCodes.SOURCE, 'the generator gave no records: nothing to compare')
    }
    if (clock !== undefined) sample.shift(clock.correctionMs())
    return { kind: 'sample', source: input.source === 'file' ? 'line-timestamps' : 'generator-timestamps', sample }
  } finally {
    await producer.close()
  }
}

/** Passes items on, noting each one's own time: a line's timestamp, a generated record's simulated clock. */
async function* observeTimes(
  items: AsyncIterable<SourceItem>,
  sample: TimestampSample,
  clock: LineClock | undefined
): AsyncGenerator<SourceItem> {
  for await (const item of items) {
    if (item.kind === 'record') {
      if (item.timestampMs !== undefined) sample.add(item.timestampMs)
      // Stamped when sent: the generator's clock starts in the past, and retention would delete such records mid-run.
      yield { kind: 'record', key: item.key, value: item.value }
      continue
    }
    const ms = clock?.read(item.line)
    if (ms !== undefined) sample.add(ms)
    yield item
  }
}
