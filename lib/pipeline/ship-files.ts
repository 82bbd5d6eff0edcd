import { errorMessage } from '../errors.js'
import type { LogFormat } from '../formats/index.js'
import type { Logger } from '../log/logger.js'
import type { SourceMetrics } from '../metrics/source-metrics.js'
import type { Producer, ProducerRecord } from '../producer/producer.js'
import { encodeHeaders } from '../protocol/record-batch-builder.js'
import type { RecordHeader, SharedHeaders } from '../protocol/record.js'
import type { FileBatch, FilePosition, FileSet } from '../sources/file-set.js'
import { AckedPositions, positionKey, type HeldFile, type PositionSink } from './acked-positions.js'
import { ParseFailureLog } from './parse-failures.js'
import {
  emptySummary,
  sendAll,
  sinkFor,
  toRecord,
  writeLineChunk,
  type ParseErrorPolicy,
  type ProduceLogsSummary
} from './produce-logs.js'

/** Files whose records' headers are kept encoded at once. */
const MAX_CACHED_HEADERS = 1024

export interface ShipFilesArgs {
  readonly files: FileSet
  readonly topic: string
  readonly producer: Producer
  readonly formatFor: (kind: string) => LogFormat | null
  readonly onParseError: ParseErrorPolicy
  /** Header values each record carries: the file it came from (unless null), and the host name (if given). */
  readonly headers: { readonly file: boolean; readonly host: string | null }
  /** Positions to save; null ships without them (every start reads each file from its start). */
  readonly positions: PositionSink | null
  /**
   * Followed files, at least once: a file whose records failed delivery with an error that may pass is read again
   * from its saved position in this run (AckedPositions), with or without `positions`. Not with `transactional`.
   */
  readonly resend?: boolean
  /**
   * Exactly once: the positions' records, sent in the same transaction as the records of the lines before them
   * (the producer is transactional); `positions` is then unused.
   */
  readonly transactional?: {
    records(positions: readonly FilePosition[]): ProducerRecord[]
    ageSeconds(): number | null
  }
  /** Positions loaded at start: kept in what is saved until their files are read on. */
  readonly saved: readonly FilePosition[]
  /** How often the file metrics update and, with `transactional`, the open transaction commits. */
  readonly checkpointMs: number
  readonly log: Logger
  readonly metrics: SourceMetrics
  /** Settles once the producer takes records. */
  readonly ready: Promise<unknown>
}

export type { PositionSink } from './acked-positions.js'

/**
 * A file set -> records -> the producer, with positions saved at least once: each batch's position is saved once
 * the records of its lines (and of every line before) are acknowledged, so a crash resends only lines whose
 * records were not acknowledged. With `transactional`, positions commit with the records every checkpointMs.
 */
export async function shipFiles(args: ShipFilesArgs): Promise<ProduceLogsSummary> {
  // One log of lines that do not parse for the whole set: a count with examples, not a line each.
  const failures = new ParseFailureLog(args.log, { policy: args.onParseError })
  const summary = emptySummary(failures)
  const exclusive = mutex()
  const headersOf = headerCache(args)
  const positions = positionsFor(args, exclusive)
  const checkpoint = positions.checkpoint
  let failure: (err: unknown) => void = () => undefined
  const failed = new Promise<never>((_resolve, reject) => {
    failure = reject
  })
  failed.catch(() => undefined)
  let running: Promise<void> | null = null
  const tick = (): void => {
    running ??= checkpoint()
      .catch((err: unknown) => {
        args.log.error({ err: errorMessage(err) }, 'saving read positions failed')
        // Inside a transaction a failed commit ends the run: a restart resumes from the last committed positions.
        if (args.transactional !== undefined) failure(err)
      })
      .finally(() => {
        running = null
      })
  }
  const batches = args.files.batches()[Symbol.asyncIterator]()
  // The files are matched, opened and first read while the producer connects.
  let upcoming: Promise<IteratorResult<FileBatch>> | null = batches.next()
  upcoming.catch(() => undefined)
  let timer: NodeJS.Timeout | undefined
  let first = true
  try {
    await args.ready
    if (args.transactional !== undefined) args.producer.beginTransaction()
    timer = setInterval(tick, args.checkpointMs)
    timer.unref()
    for (;;) {
      const next = await Promise.race([upcoming ?? batches.next(), failed])
      upcoming = null
      if (next.done === true) break
      const batch = next.value
      // The files' unread bytes at start, as a file read once announces its size: a large backlog gets its
      // compression thread at once instead of compressing on the event loop first.
      if (first) args.producer.expectInputBytes((await args.files.lag()).reduce((sum, f) => sum + f.bytes, 0))
      first = false
      await exclusive(async () => {
        await sendBatch(batch, args, failures, summary, headersOf)
        failures.report(summary.itemsRead)
        positions.handed(batch.position, args.files.takeReleased(), batch.generation)
      })
    }
    positions.handed(null, args.files.takeReleased())
  } finally {
    clearInterval(timer)
    // A run that fails while a followed file is idle: the read waiting for lines ends at its next poll instead.
    args.files.stop()
    await upcoming?.catch(() => undefined)
    await batches.return?.(undefined)
    await running
  }
  // Shutdown: what was handed on is flushed, and its positions saved once acknowledged (or committed).
  await positions.close()
  failures.report(summary.itemsRead, true)
  const held = positions.heldFiles()
  if (held.length > 0)
    return { ...summary, heldFiles: held, ...(args.positions === null ? { positionsSaved: false } : {}) }
  // Every line whose records failed was read again and its records acknowledged: nothing is left undelivered.
  return args.resend === true && args.transactional === undefined ? { ...summary, deliveryRecovered: true } : summary
}

type Mutex = <T>(run: () => Promise<T>) => Promise<T>

/** Runs the functions given one at a time: the records of a transaction are not sent while it commits. */
function mutex(): Mutex {
  let last: Promise<unknown> = Promise.resolve()
  return <T>(run: () => Promise<T>) => {
    const result = last.then(run)
    last = result.catch(() => undefined)
    return result
  }
}

/** What becomes of the positions of the lines handed on: saved as acknowledged, committed, or only metrics. */
interface Positions {
  /**
   * `sent`: the position after the lines just sent (null for none), read in the file's `generation`; `released`:
   * files read to their end.
   */
  handed(sent: FilePosition | null, released: readonly FilePosition[], generation?: number): void
  /** Files whose saved positions stay before lines that failed delivery (at least once only). */
  heldFiles(): readonly HeldFile[]
  /** Every checkpointMs. */
  checkpoint(): Promise<void>
  close(): Promise<void>
}

/** `exclusive`: what the records of a batch are sent under, so a transaction does not commit while they are. */
function positionsFor(args: ShipFilesArgs, exclusive: Mutex): Positions {
  if (args.transactional !== undefined) {
    const handed = new Map<string, FilePosition>(
      args.saved.filter((p) => p.done !== true).map((p) => [positionKey(p), p])
    )
    const committed = { json: '' }
    const checkpoint = (): Promise<void> => exclusive(() => commitPositions(args, handed, committed))
    // A failed record fails its transaction, which aborts with the positions in it and ends the run: none held.
    return {
      handed: (sent, released) => {
        for (const p of sent === null ? released : [sent, ...released]) handed.set(positionKey(p), p)
      },
      heldFiles: () => [],
      checkpoint,
      close: checkpoint
    }
  }
  const metrics = async (): Promise<void> => updateFileMetrics(args)
  const resend = args.resend === true
  if (args.positions === null && !resend)
    return { handed: () => undefined, heldFiles: () => [], checkpoint: metrics, close: metrics }
  // Without a state file the positions are kept only to know where a held file's lines are read again from.
  const sink = args.positions ?? { save: async () => undefined, ageSeconds: () => null }
  const sourceMetrics = args.positions === null ? { ...args.metrics, positionAge: () => undefined } : args.metrics
  const { producer, log } = args
  const acked = new AckedPositions(
    { producer, log, metrics: sourceMetrics, sink, ...(resend ? { resend: args.files } : {}) },
    args.saved
  )
  if (resend) args.files.keepOpen((key) => acked.keeps(key))
  return {
    handed: (sent, released, generation) => acked.handed(sent, released, generation),
    heldFiles: () => acked.heldFiles(),
    checkpoint: metrics,
    close: async () => {
      await Promise.all([metrics(), acked.close()])
    }
  }
}

/** Exactly once: the positions go into the open transaction, which commits; the next one begins. */
async function commitPositions(
  args: ShipFilesArgs,
  handed: Map<string, FilePosition>,
  committed: { json: string }
): Promise<void> {
  const transactional = args.transactional as NonNullable<ShipFilesArgs['transactional']>
  void updateFileMetrics(args)
  const noted = [...handed.values()]
  // Unchanged positions are not written again: a transaction with no records ends without a coordinator call.
  const json = JSON.stringify(noted)
  if (json !== committed.json) await args.producer.sendMany(transactional.records(noted))
  committed.json = json
  await args.producer.commitTransaction()
  args.producer.beginTransaction()
  for (const p of noted) if (p.done === true && handed.get(positionKey(p)) === p) handed.delete(positionKey(p))
  args.metrics.positionAge(0)
}

/** Where the records of a batch go: in place into batches where the format writes them, else a record each. */
async function sendBatch(
  batch: FileBatch,
  args: ShipFilesArgs,
  failures: ParseFailureLog,
  summary: ProduceLogsSummary,
  headersOf: (batch: FileBatch) => SharedHeaders | undefined
): Promise<void> {
  const { topic, onParseError, log, producer } = args
  const format = args.formatFor(batch.kind)
  const headers = headersOf(batch)
  const write = { topic, format, onParseError, log, failures, producer, ...(headers === undefined ? {} : { headers }) }
  if (batch.lines !== undefined && format !== null) {
    // Lines read in place, as the single-file path reads them.
    await writeLineChunk(batch.lines, format, sinkFor(producer, topic, headers), write, summary)
    return
  }
  const records: ProducerRecord[] = []
  const itemOf: number[] = []
  for (const item of batch.items) {
    summary.itemsRead++
    const record = toRecord(item, write, summary)
    if (record === undefined) continue
    records.push(headers === undefined ? record : { ...record, headers: headers.list })
    itemOf.push(summary.itemsRead)
  }
  await sendAll(records, itemOf, args, summary)
}

/**
 * The headers of a batch's records (its own, the source file, the host), encoded once per file: every record of
 * the file carries the same bytes.
 */
function headerCache(args: ShipFilesArgs): (batch: FileBatch) => SharedHeaders | undefined {
  const cache = new Map<string, { of: readonly RecordHeader[]; headers: SharedHeaders | undefined }>()
  return (batch) => {
    const known = cache.get(batch.path)
    if (known !== undefined && known.of === batch.headers) return known.headers
    const list: RecordHeader[] = [...batch.headers]
    if (args.headers.file) list.push({ key: 'squeeze.source.file', value: Buffer.from(batch.path) })
    if (args.headers.host !== null) list.push({ key: 'squeeze.source.host', value: Buffer.from(args.headers.host) })
    const headers = list.length === 0 ? undefined : { list, bytes: encodeHeaders(list) }
    // Bounded: a node's container logs come and go.
    if (cache.size >= MAX_CACHED_HEADERS) cache.clear()
    cache.set(batch.path, { of: batch.headers, headers })
    return headers
  }
}

async function updateFileMetrics(args: ShipFilesArgs): Promise<void> {
  const counts = args.files.counts()
  args.metrics.files('reading', counts.reading)
  args.metrics.files('rotated', counts.rotated)
  const age = (args.transactional ?? args.positions)?.ageSeconds()
  if (age !== undefined && age !== null) args.metrics.positionAge(age)
  for (const { path, bytes } of await args.files.lag().catch(() => [])) args.metrics.lagBytes(path, bytes)
}
