import { ErrorCodes, SqueezeError } from '../errors.js'
import type { LogFormat } from '../formats/index.js'
import type { LinePass, WrittenValueSink } from '../formats/log-format.js'
import type { ValueWriter } from '../protocol/record-batch-builder.js'
import type { Logger } from '../log/logger.js'
import type { Producer, ProducerRecord } from '../producer/producer.js'
import type { SharedHeaders } from '../protocol/record.js'
import { chunkLines, lineEnd, textEnd } from '../sources/line-chunks.js'
import type { LineChunk, SourceBatch, SourceItem } from '../sources/source.js'
import { ParseFailureLog, type ParseFailureExample } from './parse-failures.js'

/** What to do with a line its format cannot parse: count it and drop it, or count it and send the raw text. */
export type ParseErrorPolicy = 'skip' | 'raw'

export interface ProduceLogsSummary {
  itemsRead: number
  recordsSent: number
  parseErrors: number
  sentRaw: number
  rejected: number
  /** The first few lines that did not parse, with the reason. */
  parseErrorExamples: readonly ParseFailureExample[]
  /** A file set's files whose saved positions stay before lines that failed delivery: the next start sends them. */
  heldFiles?: ReadonlyArray<{ readonly path: string; readonly offset: number }>
  /** Followed files: every line whose records failed delivery was read again and its records acknowledged. */
  deliveryRecovered?: boolean
  /** False where a file set saves no read positions (--no-state): heldFiles' offsets are this run's only. */
  positionsSaved?: boolean
  /** A file set's files left unread for being compressed (rotated logs' .gz). */
  compressedFilesSkipped?: number
}

/** A run's counts before its first line, sharing the failure log's examples. */
export function emptySummary(failures: ParseFailureLog): ProduceLogsSummary {
  return {
    itemsRead: 0,
    recordsSent: 0,
    parseErrors: 0,
    sentRaw: 0,
    rejected: 0,
    parseErrorExamples: failures.examples
  }
}

/**
 * Bytes of record values parsed while the producer connects, held for it: reading goes on meanwhile, on the cores
 * the connection leaves idle, until this much is held.
 */
export const EARLY_RECORDS_BYTES = 8 * 1024 * 1024

/** produceLogs's arguments, with the log of lines that do not parse. */
type Run = ProduceLogsArgs & { readonly failures: ParseFailureLog }

export interface ProduceLogsArgs {
  /**
   * Items one at a time, or in batches (what a source has ready at once), which cost no promise per item; or whole
   * lines as read (LineChunk), which a format with writeLineBytes reads in place.
   */
  readonly source: AsyncIterable<SourceItem | SourceBatch | LineChunk>
  /** Parses text lines; null sends each line's text as the value. */
  readonly format: LogFormat | null
  readonly topic: string
  readonly producer: Producer
  readonly onParseError: ParseErrorPolicy
  readonly log: Logger
  readonly signal?: AbortSignal
  /**
   * Settles once the producer takes records (it is connecting): the source is read and parsed meanwhile, and the
   * first records wait for it. A rejection ends produceLogs with that error.
   */
  readonly ready?: Promise<unknown>
  readonly onProgress?: (summary: Readonly<ProduceLogsSummary>) => void
  readonly progressEvery?: number
}

/** Source -> format -> producer. Bad lines are counted and handled by policy; nothing stops the stream. */
export async function produceLogs(given: ProduceLogsArgs): Promise<ProduceLogsSummary> {
  const failures = new ParseFailureLog(given.log, {
    ...(given.format === null ? {} : { kind: given.format.kind }),
    policy: given.onParseError
  })
  const args: Run = { ...given, failures }
  const summary = emptySummary(failures)
  const progressEvery = args.progressEvery ?? 10000
  const records: ProducerRecord[] = []
  /** The item number of each record, for the log line of one the producer refuses. */
  const itemOf: number[] = []
  const sink = args.format === null ? null : sinkFor(args.producer, args.topic)
  let ready = args.ready === undefined
  /** Whether args.ready settled (resolved or rejected): then held records are sent, or its error thrown. */
  let settled = ready
  args.ready?.then(
    () => (settled = true),
    () => (settled = true)
  )
  let heldBytes = 0
  for await (const read of args.source) {
    if (args.signal?.aborted === true) break
    const before = summary.itemsRead
    if (isLineChunk(read) && sink !== null && args.format !== null && ready) {
      await writeLineChunk(read, args.format, sink, args, summary)
    } else {
      const chunk = isLineChunk(read) ? chunkLines(read, args.format?.checkLine !== undefined) : read
      const items = isBatch(chunk) ? chunk : [chunk]
      if (sink !== null && args.format !== null && ready) {
        await writeItems(items, args.format, sink, args, summary)
      } else {
        // Until the producer is ready, lines are encoded into records of their own (parsed while it connects).
        for (const item of items) {
          summary.itemsRead++
          const record = toRecord(item, args, summary)
          if (record === undefined) continue
          records.push(record)
          itemOf.push(summary.itemsRead)
          heldBytes += record.value?.length ?? 0
        }
        const holding = !ready && !settled && heldBytes < EARLY_RECORDS_BYTES
        if (!holding) {
          if (!ready) {
            await args.ready
            ready = true
          }
          await sendAll(records, itemOf, args, summary)
          records.length = 0
          itemOf.length = 0
          heldBytes = 0
        }
      }
    }
    if (Math.floor(summary.itemsRead / progressEvery) > Math.floor(before / progressEvery)) args.onProgress?.(summary)
    failures.report(summary.itemsRead)
  }
  await args.ready
  // Read and parsed before the producer was ready, with no more input after them.
  if (records.length > 0) await sendAll(records, itemOf, args, summary)
  failures.report(summary.itemsRead, true)
  return summary
}

function isBatch(chunk: SourceItem | SourceBatch): chunk is SourceBatch {
  return Array.isArray(chunk)
}

function isLineChunk(read: SourceItem | SourceBatch | LineChunk): read is LineChunk {
  return !Array.isArray(read) && !('kind' in read)
}

/** What encoding a line into its record needs. */
export type RecordArgs = Pick<ProduceLogsArgs, 'topic' | 'format' | 'onParseError' | 'log'> & {
  readonly failures: ParseFailureLog
}

/** The record for one item, or undefined for a line the policy skips. */
export function toRecord(item: SourceItem, args: RecordArgs, summary: ProduceLogsSummary): ProducerRecord | undefined {
  if (item.kind === 'record') {
    return {
      topic: args.topic,
      key: item.key,
      value: item.value,
      ...(item.timestampMs === undefined ? {} : { timestamp: item.timestampMs })
    }
  }
  if (args.format === null) return { topic: args.topic, key: null, value: item.bytes ?? Buffer.from(item.line) }
  try {
    // A line's own bytes where the record is the line: its text checked, not encoded again.
    const { format } = args
    if (item.bytes !== undefined && format.checkLine !== undefined) {
      format.checkLine(item.line)
      return { topic: args.topic, key: null, value: item.bytes }
    }
    return { topic: args.topic, key: null, value: format.encodeLine(item.line) }
  } catch (err) {
    return parseFailed(item.line, err, args, summary)
  }
}

/** A line that does not parse: counted and kept for the summary log, then skipped (undefined) or its raw text's
 * record, by policy. */
function parseFailed(
  line: string,
  err: unknown,
  args: RecordArgs,
  summary: ProduceLogsSummary
): ProducerRecord | undefined {
  summary.parseErrors++
  args.failures.add(summary.itemsRead, line, err)
  if (args.onParseError === 'skip') return undefined
  summary.sentRaw++
  return { topic: args.topic, key: null, value: Buffer.from(line) }
}

/** Where a format writes its records: the topic's batches, each record with `headers` if given. */
export function sinkFor(producer: Producer, topic: string, headers?: SharedHeaders): WrittenValueSink {
  return {
    put<T>(maxValueBytes: number, write: ValueWriter<T>, arg: T): Promise<void> | undefined {
      return producer.sendWritten(topic, maxValueBytes, write, arg, headers)
    }
  }
}

/** What writing lines straight into batches needs: encoding, the producer, and headers every record carries. */
export type WriteArgs = RecordArgs & { readonly producer: Producer; readonly headers?: SharedHeaders }

function withHeaders(record: ProducerRecord, args: WriteArgs): ProducerRecord {
  return args.headers === undefined ? record : { ...record, headers: args.headers.list }
}

/** The lines of a chunk one at a time, for a format without a pass of its own (LogFormat.linePass). */
class OneLinePass implements LinePass {
  readonly count = 1
  next = 0
  private lineStart = 0
  private textStop = 0

  read(bytes: Buffer, start: number, end: number): void {
    const newline = lineEnd(bytes, start, end)
    this.lineStart = start
    this.textStop = textEnd(bytes, start, newline)
    this.next = newline + 1
  }

  start(): number {
    return this.lineStart
  }

  end(): number {
    return this.textStop
  }

  taken(): boolean {
    return false
  }

  put(): undefined {
    return undefined
  }

  release(): void {}
}

/** The pass writeLineChunk reads a chunk's lines with: the format's own (LogFormat.linePass), else one line at a time. */
export function linePassFor(format: Pick<LogFormat, 'linePass'>): LinePass {
  return format.linePass?.() ?? new OneLinePass()
}

/**
 * The lines of a chunk, each read in place from its bytes and written straight into its batch, in order: writeItems
 * without a string per line. The format reads many lines at once where it can (LogFormat.linePass), and each line
 * that pass does not take by itself (writeLineBytes). A line that does not parse is decoded for the log and the raw
 * policy, as writeItems has it.
 */
export async function writeLineChunk(
  chunk: LineChunk,
  format: LogFormat,
  sink: WrittenValueSink,
  args: WriteArgs,
  summary: ProduceLogsSummary
): Promise<void> {
  const { bytes, end } = chunk
  const pass = linePassFor(format)
  try {
    for (let start = 0; start <= end; start = pass.next) {
      pass.read(bytes, start, end)
      for (let i = 0; i < pass.count; i++) {
        summary.itemsRead++
        const pending = writeLineOfPass(pass, i, bytes, format, sink, args, summary)
        // Awaited only where the producer returned a promise: no promise per line.
        if (pending === undefined || (pending !== null && (await accepted(pending, args, summary))))
          summary.recordsSent++
      }
    }
  } finally {
    pass.release()
  }
}

/** Line `i` of `pass` written into its batch: what sink.put returns, or null for a line the policy skips. */
function writeLineOfPass(
  pass: LinePass,
  i: number,
  bytes: Buffer,
  format: LogFormat,
  sink: WrittenValueSink,
  args: WriteArgs,
  summary: ProduceLogsSummary
): Promise<void> | undefined | null {
  try {
    return pass.taken(i) ? pass.put(i, sink) : format.writeLineBytes(bytes, pass.start(i), pass.end(i), sink)
  } catch (err) {
    const raw = parseFailed(bytes.toString('utf8', pass.start(i), pass.end(i)), err, args, summary)
    return raw === undefined ? null : args.producer.send(withHeaders(raw, args))
  }
}

/**
 * Whether a record whose send returned `pending` was taken: false for a record too large, which is counted and
 * logged (the rest go on). Other errors are thrown.
 */
async function accepted(
  pending: Promise<void>,
  args: Pick<WriteArgs, 'log'>,
  summary: ProduceLogsSummary
): Promise<boolean> {
  try {
    await pending
    return true
  } catch (err) {
    if (!(err instanceof SqueezeError && err.code === ErrorCodes.RECORD_TOO_LARGE)) throw err
    summary.rejected++
    args.log.error({ line: summary.itemsRead, code: err.code }, err.message)
    return false
  }
}

/**
 * Lines, each written straight into its batch (LogFormat.writeLine), in order; a line that comes with bytes its
 * text would not re-encode to (not valid UTF-8) is checked and sent as those bytes. A promise is awaited only
 * where the producer returns one (buffer.memory full, metadata to load, a record too large).
 */
export async function writeItems(
  items: SourceBatch,
  format: LogFormat,
  sink: WrittenValueSink,
  args: WriteArgs,
  summary: ProduceLogsSummary
): Promise<void> {
  for (const item of items) {
    summary.itemsRead++
    let pending: Promise<void> | undefined
    if (item.kind === 'record' || item.bytes !== undefined) {
      const record = toRecord(item, args, summary)
      if (record === undefined) continue
      pending = args.producer.send(withHeaders(record, args))
    } else {
      try {
        pending = format.writeLine(item.line, sink)
      } catch (err) {
        const raw = parseFailed(item.line, err, args, summary)
        if (raw === undefined) continue
        pending = args.producer.send(withHeaders(raw, args))
      }
    }
    if (pending === undefined || (await accepted(pending, args, summary))) summary.recordsSent++
  }
}

/**
 * Hands the records to sendMany (no await per record). A record too large is counted and logged and the rest
 * go on: sendMany accepted the ones before it, which the producer's accepted count tells.
 */
export async function sendAll(
  records: readonly ProducerRecord[],
  itemOf: readonly number[],
  args: Pick<ProduceLogsArgs, 'producer' | 'log'>,
  summary: ProduceLogsSummary
): Promise<void> {
  let from = 0
  while (from < records.length) {
    const acceptedBefore = args.producer.snapshot().recordsAccepted
    try {
      await args.producer.sendMany(from === 0 ? records : records.slice(from))
      summary.recordsSent += records.length - from
      return
    } catch (err) {
      if (!(err instanceof SqueezeError && err.code === ErrorCodes.RECORD_TOO_LARGE)) throw err
      const accepted = args.producer.snapshot().recordsAccepted - acceptedBefore
      summary.recordsSent += accepted
      summary.rejected++
      args.log.error({ line: itemOf[from + accepted], code: err.code }, err.message)
      from += accepted + 1
    }
  }
}
