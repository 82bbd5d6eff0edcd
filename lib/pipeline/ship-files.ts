import { errorMessage } from '../errors.js'
import type { LogFormat } from '../formats/index.js'
import type { Logger } from '../log/logger.js'
import type { SourceMetrics } from '../metrics/source-metrics.js'
import type { Producer, ProducerRecord } from '../producer/producer.js'
import type { RecordHeader } from '../protocol/record.js'
import type { FileBatch, FilePosition, FileSet } from '../sources/file-set.js'
import { ParseFailureLog } from './parse-failures.js'
import { emptySummary, sendAll, toRecord, type ParseErrorPolicy, type ProduceLogsSummary } from './produce-logs.js'

/** Where positions go once the records of the lines before them are acknowledged: a state file, or none. */
export interface PositionSink {
  save(positions: readonly FilePosition[]): Promise<void>
  ageSeconds(): number | null
}

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
   * Exactly once: the positions' records, sent in the same transaction as the records of the lines before them
   * (the producer is transactional); `positions` is then unused.
   */
  readonly transactional?: {
    records(positions: readonly FilePosition[]): ProducerRecord[]
    ageSeconds(): number | null
  }
  /** Positions loaded at start: kept in what is saved until their files are read on. */
  readonly saved: readonly FilePosition[]
  readonly checkpointMs: number
  readonly log: Logger
  readonly metrics: SourceMetrics
  /** Settles once the producer takes records. */
  readonly ready: Promise<unknown>
}

function keyOf(p: FilePosition): string {
  return `${p.dev}:${p.ino}`
}

/**
 * A file set -> records -> the producer, with positions saved at least once: every checkpointMs the positions of
 * the lines handed on so far are noted, the records accepted so far are flushed, and once each is acknowledged
 * (none failed) those positions are written. A crash then resends only lines whose records were not acknowledged.
 */
export async function shipFiles(args: ShipFilesArgs): Promise<ProduceLogsSummary> {
  // One log of lines that do not parse for the whole set: a count with examples, not a line each.
  const failures = new ParseFailureLog(args.log, { policy: args.onParseError })
  const summary = emptySummary(failures)
  const handed = new Map<string, FilePosition>(args.saved.filter((p) => p.done !== true).map((p) => [keyOf(p), p]))
  const exclusive = mutex()
  const committed = { json: '' }
  const checkpoint =
    args.transactional === undefined
      ? checkpointer(args, handed)
      : () => exclusive(() => commitPositions(args, handed, committed))
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
  await args.ready
  if (args.transactional !== undefined) args.producer.beginTransaction()
  const timer = setInterval(tick, args.checkpointMs)
  timer.unref()
  const batches = args.files.batches()[Symbol.asyncIterator]()
  try {
    for (;;) {
      const next = await Promise.race([batches.next(), failed])
      if (next.done === true) break
      const batch = next.value
      await exclusive(async () => {
        await sendBatch(batch, args, failures, summary)
        failures.report(summary.itemsRead)
        handed.set(keyOf(batch.position), batch.position)
        for (const released of args.files.takeReleased()) handed.set(keyOf(released), released)
      })
    }
    for (const released of args.files.takeReleased()) handed.set(keyOf(released), released)
  } finally {
    clearInterval(timer)
    await batches.return?.(undefined)
    await running
  }
  // Shutdown: what was handed on is flushed, and its positions saved once acknowledged (or committed).
  await checkpoint()
  failures.report(summary.itemsRead, true)
  return summary
}

/** Runs the functions given one at a time: the records of a transaction are not sent while it commits. */
function mutex(): <T>(run: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve()
  return <T>(run: () => Promise<T>) => {
    const result = last.then(run)
    last = result.catch(() => undefined)
    return result
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
  for (const p of noted) if (p.done === true && handed.get(keyOf(p)) === p) handed.delete(keyOf(p))
  args.metrics.positionAge(0)
}

/** The records of a batch's lines, each with the headers that say where it came from. */
async function sendBatch(
  batch: FileBatch,
  args: ShipFilesArgs,
  failures: ParseFailureLog,
  summary: ProduceLogsSummary
): Promise<void> {
  const { topic, onParseError, log } = args
  const recordArgs = { topic, format: args.formatFor(batch.kind), onParseError, log, failures }
  const headers: RecordHeader[] = [...batch.headers]
  if (args.headers.file) headers.push({ key: 'squeeze.source.file', value: Buffer.from(batch.path) })
  if (args.headers.host !== null) headers.push({ key: 'squeeze.source.host', value: Buffer.from(args.headers.host) })
  const records: ProducerRecord[] = []
  const itemOf: number[] = []
  for (const item of batch.items) {
    summary.itemsRead++
    const record = toRecord(item, recordArgs, summary)
    if (record === undefined) continue
    records.push(headers.length === 0 ? record : { ...record, headers })
    itemOf.push(summary.itemsRead)
  }
  await sendAll(records, itemOf, args, summary)
}

/** Saves the positions noted now once the producer has every record accepted so far acknowledged. */
function checkpointer(args: ShipFilesArgs, handed: Map<string, FilePosition>): () => Promise<void> {
  return async () => {
    void updateFileMetrics(args)
    if (args.positions === null) return
    const noted = [...handed.values()]
    const failedBefore = args.producer.snapshot().recordsFailed
    await args.producer.flushAccepted()
    if (args.producer.snapshot().recordsFailed > failedBefore) {
      const failed = args.producer.snapshot().recordsFailed - failedBefore
      args.log.warn({ failed }, 'records failed: read positions not advanced')
      return
    }
    await args.positions.save(noted)
    // A file done with is saved once as done; then its entry goes, unless it was read again meanwhile.
    for (const p of noted) if (p.done === true && handed.get(keyOf(p)) === p) handed.delete(keyOf(p))
    args.metrics.positionAge(0)
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
