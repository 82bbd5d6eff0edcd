import { AbortedTransactions } from '../../consumer/aborted-transactions.js'
import { ErrorCodes, SqueezeError, errorCode, errorMessage, throwIfCut } from '../../errors.js'
import { BATCH } from '../../protocol/batch-layout.js'
import { describeKafkaError, KafkaErrorCode } from '../../kafka/error-codes.js'
import { fetchRequest, ISOLATION, type FetchedPartition } from '../../kafka/fetch-request.js'
import { defaultMaxBatchUncompressedBytes } from '../../config/read-properties.js'
import { splitFetched } from '../../consumer/fetched-batches.js'
import { isAbortMarker, readBatch, type ReadBatch } from '../../protocol/record-batch-reader.js'
import { mapConcurrently } from '../../map-concurrently.js'
import { sourceBatch, type SourceBatch } from '../source-batches.js'
import type { SourceRecord } from './rebatch.js'
import type { SourceRead, SourceReadDeps } from './read-source.js'
import type { SampleBudget } from './sweep-flags.js'

/** What sampleWindows read: the records by partition and as stretches read back to back, and the plan. */
export type SampledWindows = SourceRead & {
  byPartition: Map<number, SourceRecord[]>
  plan: SamplingPlan
  windows: Array<{ partition: number; records: SourceRecord[] }>
}

const FETCH_BYTES = 1024 * 1024
const MIN_FETCH_BYTES = 16 * 1024

/** Where the sample came from: enough for a reader to judge how much of the topic it stands for. */
export interface SamplingPlan {
  /** Records asked for with --sample N; null when a size was asked for. */
  readonly requestedRecords: number | null
  /** Record bytes (key, value, headers) asked for with --sample 64MiB; null when records were asked for. */
  readonly requestedBytes: number | null
  readonly windowsPerPartition: number
  readonly partitions: number
  readonly windows: ReadonlyArray<{
    readonly partition: number
    readonly fromOffset: number
    readonly records: number
    readonly bytes: number
    readonly fromMs: number
    readonly toMs: number
  }>
  /** Records the topic held when sampled (end minus start offsets, every partition). */
  readonly topicRecords: number
  /** Record bytes read, counted as --bytes counts them. */
  readonly bytes: number
  /** Earliest and latest record timestamp in the sample: the time span it covers. */
  readonly fromMs: number
  readonly toMs: number
}

export const DEFAULT_WINDOWS = 8

/** One window's offsets: read from `from`, never at or past `until`, and at most `maxBytes` of records. */
interface WindowRange {
  readonly from: number
  readonly until: number
  readonly maxBytes: number
}

/** Partitions sampled at once: each waits on its own fetches, so one slow leader does not hold the others. */
const PARTITIONS_AT_ONCE = 8

/** One partition's windows, read in turn: a byte-sized window is placed using the bytes per record read before it. */
interface PartitionSample {
  readonly records: SourceRecord[]
  bytes: number
  readonly plan: Array<SamplingPlan['windows'][number]>
  /** Runs of records read back to back, each re-batched as one. */
  readonly stretches: Array<{ partition: number; records: SourceRecord[] }>
}

/**
 * Reads about `budget` (records, or record bytes) as `windows` windows per partition, spread evenly over each
 * partition's retained offsets (and so over its time range), each partition's share in proportion to its
 * records: a topic whose traffic changed over time is sampled across the change, not at its oldest end.
 * Partitions are read concurrently; the result lists them in the order the broker listed them.
 */
export async function sampleWindows(
  deps: SourceReadDeps,
  topic: string,
  budget: SampleBudget,
  windows: number = DEFAULT_WINDOWS,
  onStoredBatch?: (batch: SourceBatch) => void
): Promise<SampledWindows> {
  await deps.cluster.addMultipleTargetTopics([topic])
  const offsets = (await deps.admin.fetchTopicOffsets(topic)).map((o) => ({
    partition: o.partition,
    low: Number(o.low),
    high: Number(o.high)
  }))
  const topicRecords = offsets.reduce((n, o) => n + o.high - o.low, 0)
  const maxUncompressedBytes = deps.read?.maxBatchUncompressedBytes ?? defaultMaxBatchUncompressedBytes(FETCH_BYTES)
  const guard: ReadGuard = { maxUncompressedBytes, skipped: 0, log: deps.log }
  const samples = await mapConcurrently(offsets, PARTITIONS_AT_ONCE, (o) =>
    samplePartition(deps, topic, { ...o, topicRecords }, budget, windows, guard, onStoredBatch)
  )
  const all = samples.flatMap((p) => p.plan).filter((w) => w.records > 0)
  const records = samples.reduce((n, p) => n + p.records.length, 0)
  const bytes = samples.reduce((n, p) => n + p.bytes, 0)
  return {
    byPartition: new Map(samples.map((p, i) => [(offsets[i] as (typeof offsets)[number]).partition, p.records])),
    records,
    bytes,
    skippedBatches: guard.skipped,
    windows: samples.flatMap((p) => p.stretches),
    plan: {
      requestedRecords: 'records' in budget ? budget.records : null,
      requestedBytes: 'bytes' in budget ? budget.bytes : null,
      windowsPerPartition: windows,
      partitions: offsets.length,
      windows: all,
      topicRecords,
      bytes,
      fromMs: Math.min(...all.map((w) => w.fromMs)),
      toMs: Math.max(...all.map((w) => w.toMs))
    }
  }
}

/** The decompression cap a window read honours, and what it skipped: shared by the partitions read at once. */
interface ReadGuard {
  readonly maxUncompressedBytes: number
  skipped: number
  readonly log: SourceReadDeps['log']
}

async function samplePartition(
  deps: Pick<SourceReadDeps, 'cluster' | 'onBytesRead' | 'cut'>,
  topic: string,
  span: PartitionSpan & { partition: number },
  budget: SampleBudget,
  windows: number,
  guard: ReadGuard,
  onStoredBatch: ((batch: SourceBatch) => void) | undefined
): Promise<PartitionSample> {
  const { partition } = span
  // Windows may start inside one stored batch: it counts once.
  const seen = new Set<number>()
  const stored =
    onStoredBatch === undefined
      ? undefined
      : (batch: ReadBatch): void => {
          if (seen.has(batch.baseOffset)) return
          seen.add(batch.baseOffset)
          onStoredBatch(sourceBatch(partition, batch))
        }
  const sample: PartitionSample = { records: [], bytes: 0, plan: [], stretches: [] }
  let reachedOffset: number | null = null
  for (let i = 0; ; i++) {
    const range =
      'records' in budget
        ? recordWindow(budget.records, windows, i, span)
        : byteWindow(budget.bytes, windows, i, span, { records: sample.records.length, bytes: sample.bytes })
    if (range === undefined) break
    if (range.until <= range.from) continue
    const { records, complete } = await readRange(deps, topic, partition, range, guard, stored)
    const bytes = records.reduce((n, r) => n + recordBytes(r), 0)
    // A window that runs on from where the last one read to its end (a budget as large as the partition)
    // continues one stretch of records, batched as one: no batch is cut at the seam.
    const last = sample.stretches[sample.stretches.length - 1]
    const stretch = last !== undefined && reachedOffset === range.from ? last : { partition, records: [] }
    if (stretch !== last) sample.stretches.push(stretch)
    reachedOffset = complete ? range.until : null
    let fromMs = Number.POSITIVE_INFINITY
    let toMs = Number.NEGATIVE_INFINITY
    for (const r of records) {
      stretch.records.push(r)
      sample.records.push(r)
      fromMs = Math.min(fromMs, r.timestamp)
      toMs = Math.max(toMs, r.timestamp)
    }
    sample.bytes += bytes
    sample.plan.push({ partition, fromOffset: range.from, records: records.length, bytes, fromMs, toMs })
  }
  return sample
}

interface PartitionSpan {
  readonly low: number
  readonly high: number
  readonly topicRecords: number
}

/** Window i of a records budget, centred in its slot; a share as large as the partition is one window over all of it. */
function recordWindow(
  records: number,
  windows: number,
  i: number,
  { low, high, topicRecords }: PartitionSpan
): WindowRange | undefined {
  const span = high - low
  const share = topicRecords === 0 ? 0 : Math.min(span, Math.round((records * span) / topicRecords))
  const count = share >= span ? 1 : windows
  const perWindow = share >= span ? span : Math.ceil(share / windows)
  if (i >= count || perWindow <= 0) return undefined
  const from = Math.max(low, Math.min(high - perWindow, low + Math.floor(((i + 0.5) * span) / count - perWindow / 2)))
  return { from, until: Math.min(high, from + perWindow), maxBytes: Number.POSITIVE_INFINITY }
}

/**
 * Window i of a bytes budget: its slot is the i-th of `windows` equal stretches of offsets, and it reads from
 * where its expected records centre it in the slot (by the bytes per record read so far; from the slot's start
 * before any record is read) until its share of bytes, never past the slot. So a partition smaller than its
 * share is read whole, its windows joined into one stretch.
 */
function byteWindow(
  bytes: number,
  windows: number,
  i: number,
  { low, high, topicRecords }: PartitionSpan,
  seen: { records: number; bytes: number }
): WindowRange | undefined {
  if (i >= windows) return undefined
  const span = high - low
  const perWindow = topicRecords === 0 ? 0 : (bytes * span) / topicRecords / windows
  const start = low + Math.floor((i * span) / windows)
  const until = low + Math.floor(((i + 1) * span) / windows)
  const expected = seen.bytes === 0 ? until - start : perWindow / (seen.bytes / seen.records)
  const from = Math.max(start, Math.min(until - 1, Math.floor((start + until) / 2 - expected / 2)))
  return perWindow <= 0 ? { from, until: from, maxBytes: 0 } : { from, until, maxBytes: Math.ceil(perWindow) }
}

/** Key, value and header bytes: what --bytes and a byte-sized --sample count. */
function recordBytes(r: SourceRecord): number {
  return (
    (r.key?.length ?? 0) +
    (r.value?.length ?? 0) +
    r.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0)
  )
}

/**
 * Gives `records` from index `from` on bytes of their own. A record's key and value are views of the buffer its
 * batch was read into: the whole decompressed batch, or for an uncompressed batch the whole fetch answer. A window
 * that keeps part of a batch (it starts or ends inside one) would hold all of it, and the windows of a large topic
 * mostly do, so the sample would hold up to a batch and a fetch per window beyond its own bytes; copied, it holds
 * its own bytes (small values come from Node's shared pool slabs, not an allocation each).
 */
function detach(records: SourceRecord[], from: number): void {
  const copy = (b: Buffer | null): Buffer | null => (b === null ? null : Buffer.from(b))
  for (let i = from; i < records.length; i++) {
    const r = records[i] as SourceRecord
    records[i] = {
      key: copy(r.key),
      value: copy(r.value),
      headers: r.headers.length === 0 ? r.headers : r.headers.map((h) => ({ key: h.key, value: copy(h.value) })),
      timestamp: r.timestamp
    }
  }
}

/** One Fetch of `partition` from `offset` on its leader, asking for little more than `wanted` bytes. */
async function fetchAt(
  cluster: SourceReadDeps['cluster'],
  topic: string,
  partition: number,
  offset: number,
  wanted: number
): Promise<FetchedPartition | undefined> {
  const leader = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === partition)?.leader
  if (leader === undefined || leader < 0)
    throw new SqueezeError(ErrorCodes.SOURCE, `no leader known for ${topic}-${partition}`)
  const broker = await cluster.findBroker({ nodeId: leader })
  const { request, response } = fetchRequest({
    maxWaitMs: 100,
    minBytes: 1,
    maxBytes: 8 * 1024 * 1024,
    isolationLevel: ISOLATION.READ_COMMITTED,
    partitions: [{ topic, partition, offset, maxBytes: Math.min(FETCH_BYTES, Math.max(MIN_FETCH_BYTES, wanted)) }]
  })
  const [result] = (await broker.connectionPool.send({ request, response })) as FetchedPartition[]
  if (result !== undefined && result.errorCode !== KafkaErrorCode.NONE)
    throw new SqueezeError(
      ErrorCodes.SOURCE,
      `fetch from ${topic}-${partition} at offset ${offset} failed: ${describeKafkaError(result.errorCode)}`
    )
  return result
}

/**
 * Records of one partition in offsets [from, until), fetched from its leader; aborted transactions left out.
 * Stops at the record that reaches maxBytes, and asks the broker for little more than the bytes still wanted.
 */
async function readRange(
  { cluster, onBytesRead, cut }: Pick<SourceReadDeps, 'cluster' | 'onBytesRead' | 'cut'>,
  topic: string,
  partition: number,
  { from, until, maxBytes }: WindowRange,
  guard: ReadGuard,
  onStoredBatch: ((batch: ReadBatch) => void) | undefined
): Promise<{ records: SourceRecord[]; complete: boolean }> {
  const out: SourceRecord[] = []
  let bytes = 0
  let reported = 0
  let at = from
  while (at < until && bytes < maxBytes) {
    throwIfCut(cut)
    const result = await fetchAt(cluster, topic, partition, at, maxBytes - bytes)
    if (result === undefined) break
    const limits = {
      from: at,
      highWatermark: result.highWatermark,
      maxBatchBytes: guard.maxUncompressedBytes + BATCH.HEADER_BYTES
    }
    const { batches, corrupt } = splitFetched(result.records, limits)
    if (batches.length === 0 && corrupt === null) break
    const aborted = new AbortedTransactions(result.abortedTransactions)
    const skip = (error: unknown, lastOffset: number): void => {
      guard.skipped++
      const message = `source batch left out of the sample: ${errorMessage(error)}`
      guard.log.warn({ topic, partition, code: errorCode(error) }, message)
      at = Math.max(at, lastOffset + 1)
    }
    for (const { bytes: raw, lastOffset: last } of batches) {
      let batch
      let abortMarker
      const readFrom = at
      try {
        batch = readBatch(raw, { fromOffset: readFrom, maxUncompressedBytes: guard.maxUncompressedBytes })
        abortMarker = batch.isControl && isAbortMarker(raw)
      } catch (err) {
        skip(err, last)
        continue
      }
      const { isTransactional, isControl, producerId, lastOffset } = batch
      if (
        !aborted.skips({ isTransactional, isControl, producerId, lastOffset, isAbortMarker: abortMarker }) &&
        !isControl
      ) {
        const before = out.length
        for (const r of batch.records) {
          if (r.offset >= until || bytes >= maxBytes) break
          const record = { key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }
          out.push(record)
          bytes += recordBytes(record)
        }
        const whole = batch.codecId !== 0 && batch.baseOffset >= readFrom && out.length - before === batch.recordCount
        if (!whole) detach(out, before)
        // A batch counts whole, all its records with all its bytes: per record it is then what the log stores.
        if (out.length > before) onStoredBatch?.(batch)
      }
      at = Math.max(at, lastOffset + 1)
      if (bytes >= maxBytes) break
    }
    if (corrupt !== null && bytes < maxBytes) skip(corrupt.error, corrupt.lastOffset)
    onBytesRead?.(bytes - reported)
    reported = bytes
  }
  return { records: out, complete: at >= until && bytes < maxBytes }
}
