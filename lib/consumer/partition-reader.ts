import type { Admin } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage, isTransient } from '../errors.js'
import { fetchRequest, ISOLATION, type FetchedPartition } from '../kafka/fetch-request.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { describeKafkaError, isRetriableKafkaError, KafkaErrorCode } from '../kafka/error-codes.js'
import { retry, sleep } from '../retry.js'
import type { Logger } from '../log/logger.js'
import { processCpuSeconds } from '../metrics/thread-cpu.js'
import type { BatchSkipReason, ReaderMetricsSink } from '../metrics/reader-metrics.js'
import { isAbortMarker, readBatch, type ReadBatch } from '../protocol/record-batch-reader.js'
import { defaultMaxBatchUncompressedBytes } from '../config/read-properties.js'
import { AbortedTransactions } from './aborted-transactions.js'
import { skipReason, splitFetched, type CorruptFraming, type FetchedBatch } from './fetched-batches.js'

export interface ReaderConfig {
  readonly topics: readonly string[]
  readonly from: 'earliest' | 'latest'
  /** Stop once every partition reaches the end offset it had at start (a measurement run), instead of following. */
  readonly untilEnd: boolean
  readonly isolation: 'read_committed' | 'read_uncommitted'
  readonly maxWaitMs: number
  readonly maxBytes: number
  readonly partitionMaxBytes: number
  /** Verify each batch's CRC-32C (check.crcs). */
  readonly verifyCrc: boolean
  /**
   * 'assigned': read only the partitions handed over with assign() (a group member's), starting with none;
   * committing is then the group's job. Without --follow such a reader ends once it has partitions and all
   * of them reached the end they had when it first fetched them.
   */
  readonly partitions?: 'all' | 'assigned'
  /**
   * Decompress every batch into one reused buffer. A batch handed to onBatch is then valid only until the
   * handler returns: for handlers that measure, not ones that keep records (TopicMeasurements copies the few
   * records it passes on).
   */
  readonly reuseBatchMemory?: boolean
  /**
   * The clock a batch's decompression and framing CPU is read on: the process's by default, exact for a reader
   * alone in its process; a reader beside busy threads (the projection's) passes threadCpuSeconds.
   */
  readonly cpuSeconds?: () => number
  /**
   * squeeze.max.batch.uncompressed.bytes: the most one batch may decompress to; a larger one is skipped as corrupt.
   * defaultMaxBatchUncompressedBytes(partitionMaxBytes) when left out.
   */
  readonly maxBatchUncompressedBytes?: number
}

/** How often a round with leaderless partitions refreshes the metadata while other partitions are read. */
const LEADERLESS_REFRESH_MS = 1000

export const DEFAULT_READER_CONFIG: Omit<ReaderConfig, 'topics'> = {
  from: 'earliest',
  untilEnd: true,
  isolation: 'read_committed',
  maxWaitMs: 500,
  maxBytes: 50 * 1024 * 1024,
  partitionMaxBytes: 8 * 1024 * 1024,
  verifyCrc: true
}

export interface BatchEvent {
  readonly topic: string
  readonly partition: number
  readonly batch: ReadBatch
  /** CPU spent walking the batch's records (framing, varints), apart from decompression. */
  readonly framingCpuSeconds: number
}

export interface AbortedBatchEvent {
  readonly topic: string
  readonly partition: number
  readonly lastOffset: number
}

export interface CorruptBatchEvent {
  readonly topic: string
  readonly partition: number
  readonly baseOffset: number
  readonly lastOffset: number
  /** Its message names the topic, partition and offsets. */
  readonly error: SqueezeError
  readonly reason: BatchSkipReason
  /** The batch as stored, when its framing held (a view of the fetch answer: copy what is kept). */
  readonly bytes?: Buffer
}

export interface ReaderHandlers {
  /** A returned promise is awaited before the next batch (the copier's sends): the reader reads ahead one round at most. */
  onBatch(event: BatchEvent): void | Promise<void>
  /**
   * A batch that cannot be read (over the decompression cap, corrupt framing or contents), already counted in
   * squeeze_batches_skipped_total; awaited, and reading goes on past it unless this throws.
   */
  onCorruptBatch(event: CorruptBatchEvent): void | Promise<void>
  /** Every batch that read, before read_committed leaves out aborted ones: what the log stores. */
  onStoredBatch?(event: BatchEvent): void
  /**
   * A batch read_committed leaves out (an aborted transaction's records, or its abort marker), awaited as onBatch
   * is: a handler that counts how far it got moves past it here, or it would wait forever for an end that lies
   * behind an aborted transaction.
   */
  onAbortedBatch?(event: AbortedBatchEvent): void | Promise<void>
  /** Awaited after each fetch round is handed over: a handler that cannot keep up holds the reader here. */
  betweenRounds?(): Promise<void>
}

/** Where to start reading a partition handed to the reader: a committed offset, or null for the `from` policy. */
export interface PartitionStart {
  readonly topic: string
  readonly partition: number
  readonly offset: number | null
}

export interface PartitionPosition {
  readonly topic: string
  readonly partition: number
  /** The next offset to read: what a commit stores. */
  readonly position: number
}

interface PartitionCursor {
  readonly topic: string
  readonly partition: number
  /** The next offset to hand to the handlers. */
  position: number
  /** The next offset to fetch: ahead of `position` while a fetched round is being decoded. */
  fetchAt: number
  /**
   * Where a measurement run stops: the partition's end as the broker reports it in the first fetch answer
   * (high watermark, or last stable offset for read_committed). Taken from the fetch rather than from a
   * ListOffsets call made earlier, which was seen to answer 0 for a full partition on a loaded machine.
   */
  end: number | null
  /** Given up (group revocation): an answer already on the wire for it is dropped, not handed over. */
  revoked?: boolean
}

/**
 * Reads every partition of the given topics with its own Fetch requests and hands over whole batches,
 * so the caller sees stored bytes, codec and decompression cost per batch.
 */
export class PartitionReader {
  /** The reused decompression buffer (reuseBatchMemory): starts at 1 MiB, grows to the largest batch seen. */
  private scratch: Buffer | null
  /** The partitions an 'assigned' reader reads; changed in place by assign() and revoke() between rounds. */
  private readonly assigned: PartitionCursor[] = []
  /** When the metadata was last refreshed for partitions without a known leader (at most every LEADERLESS_REFRESH_MS). */
  private leaderlessRefreshAt = 0
  private readonly cpuSeconds: () => number
  private readonly maxUncompressedBytes: number

  constructor(
    private readonly config: ReaderConfig,
    private readonly deps: {
      cluster: KafkajsCluster
      admin: Admin
      log: Logger
      lag?: (topic: string, partition: number, records: number) => void
      metrics?: ReaderMetricsSink
    }
  ) {
    this.maxUncompressedBytes =
      config.maxBatchUncompressedBytes ?? defaultMaxBatchUncompressedBytes(config.partitionMaxBytes)
    const scratchBytes = Math.min(1024 * 1024, this.maxUncompressedBytes)
    this.scratch = config.reuseBatchMemory === true ? Buffer.allocUnsafe(scratchBytes) : null
    this.cpuSeconds = config.cpuSeconds ?? processCpuSeconds
  }

  /** Starts reading the partitions (an 'assigned' reader); null offsets start where `from` says. */
  async assign(starts: readonly PartitionStart[]): Promise<void> {
    await this.deps.cluster.addMultipleTargetTopics([...new Set(starts.map((s) => s.topic))])
    for (const { topic, partition, offset } of starts) {
      const start = offset ?? (this.config.from === 'earliest' ? 0 : await this.highWatermark(topic, partition))
      this.assigned.push({ topic, partition, position: start, fetchAt: start, end: null })
    }
  }

  /** Stops reading the partitions and returns where each stopped, for the commit that hands them over. */
  revoke(partitions: ReadonlyArray<{ topic: string; partition: number }>): PartitionPosition[] {
    const positions: PartitionPosition[] = []
    for (const { topic, partition } of partitions) {
      const at = this.assigned.findIndex((c) => c.topic === topic && c.partition === partition)
      if (at < 0) continue
      const [cursor] = this.assigned.splice(at, 1)
      if (cursor === undefined) continue
      cursor.revoked = true
      positions.push({ topic, partition, position: cursor.position })
    }
    return positions
  }

  /** Where each assigned partition stands now (the periodic commit). */
  positions(): PartitionPosition[] {
    return this.assigned.map(({ topic, partition, position }) => ({ topic, partition, position }))
  }

  async run(handlers: ReaderHandlers, signal?: AbortSignal): Promise<void> {
    // A group member's cursors come and go with its assignment; committing them is the group's (lib/group).
    const cursors = this.config.partitions === 'assigned' ? this.assigned : await this.initialCursors()
    await this.readUntilDone(cursors, handlers, signal)
  }

  /**
   * Fetch, then decode, round after round, with the next round's fetch already on the wire while this one is
   * decoded: where the next fetch starts is known from the batch headers alone, and the broker answers on its
   * own core meanwhile. After a round with a partition error, the next fetch waits until that error is handled.
   */
  private async readUntilDone(
    cursors: PartitionCursor[],
    handlers: ReaderHandlers,
    signal: AbortSignal | undefined
  ): Promise<void> {
    let prefetched: Promise<FetchedRound> | null = null
    // A function, not a narrowed property: the signal can fire during any await below.
    const aborted = (): boolean => signal?.aborted === true
    try {
      while (!aborted()) {
        const round = prefetched ?? this.fetchRound(cursors, signal)
        prefetched = null
        const fetched = await round
        if (fetched === 'done') return
        if (fetched.every(({ result }) => result.errorCode === KafkaErrorCode.NONE) && !aborted())
          prefetched = this.fetchRound(cursors, signal)
        for (const { cursor, result, batches, corrupt } of fetched) {
          if (cursor.revoked === true) continue
          if (result.errorCode !== KafkaErrorCode.NONE) await this.handleError(cursor, result.errorCode, signal)
          else await this.consume(cursor, batches, new AbortedTransactions(result.abortedTransactions), handlers)
          const corruptSeen = result.errorCode === KafkaErrorCode.NONE && corrupt !== null
          if (corruptSeen) await this.skipCorrupt(cursor, corrupt, handlers)
          if (result.errorCode === KafkaErrorCode.NONE && !isRevoked(cursor)) this.reportLag(cursor, result)
        }
        await handlers.betweenRounds?.()
      }
    } finally {
      // A fetch still on the wire when reading stops (abort, handler error) must not reject unobserved.
      await prefetched?.catch(() => undefined)
    }
  }

  /**
   * One Fetch per leader for every partition not yet at its end; advances each `fetchAt` past what came back.
   * A leader that is unknown or unreachable (election, broker restart) is waited for with backoff, as long as it
   * takes, since a follower outlives broker restarts; an error no retry fixes (refused credentials, a
   * protocol the broker lacks) ends the read. Shutdown ends the wait with an empty round.
   */
  private async fetchRound(cursors: PartitionCursor[], signal: AbortSignal | undefined): Promise<FetchedRound> {
    if (this.config.partitions === 'assigned' && cursors.length === 0) {
      // A group member waiting for partitions (none yet, or more members than partitions).
      await sleep(this.config.maxWaitMs, signal)
      return []
    }
    try {
      return await retry(() => this.tryFetchRound(cursors), {
        initialDelayMs: 200,
        maxDelayMs: 2000,
        shouldRetry: isTransient,
        signal,
        onRetry: (err, attempt, delayMs) =>
          this.deps.log.warn(
            { err: errorMessage(err), attempt, retryInMs: Math.round(delayMs) },
            'fetch failed; retrying'
          )
      })
    } catch (err) {
      if (signal?.aborted === true) return []
      throw new SqueezeError(ErrorCodes.SOURCE, `fetch failed: ${errorMessage(err)}`, { cause: err })
    }
  }

  private async tryFetchRound(cursors: PartitionCursor[]): Promise<FetchedRound> {
    const active = cursors.filter(
      (cursor) => !this.config.untilEnd || cursor.end === null || cursor.fetchAt < cursor.end
    )
    if (active.length === 0) return 'done'
    const byLeader = this.groupByLeader(active)
    // A partition whose leader the metadata lacks (a topic created moments ago, an election) is left out of the
    // round; while other partitions still answer nothing else would refresh the metadata, so it would never be read.
    const leaderless = active.length - [...byLeader.values()].reduce((n, group) => n + group.length, 0)
    if (leaderless > 0 && byLeader.size > 0 && Date.now() - this.leaderlessRefreshAt >= LEADERLESS_REFRESH_MS) {
      this.leaderlessRefreshAt = Date.now()
      await this.deps.cluster.refreshMetadata().catch(() => undefined)
    }
    let answers
    try {
      if (byLeader.size === 0)
        throw new SqueezeError(ErrorCodes.SOURCE, `no leader known for ${active.length} partition(s)`, {
          retriable: true
        })
      // All leaders or none: an answer is only taken (fetchAt advanced) below, so a retried round loses nothing.
      answers = await Promise.all([...byLeader].map(([leader, group]) => this.fetchFrom(leader, group)))
    } catch (err) {
      await this.deps.cluster.refreshMetadata().catch(() => undefined)
      throw err
    }
    const fetched: FetchedPartitionRound[] = []
    for (const { cursor, result } of answers.flat()) {
      if (result.errorCode !== KafkaErrorCode.NONE) {
        fetched.push({ cursor, result, batches: [], corrupt: null })
        continue
      }
      // A negative end means the broker does not know it yet (-1); read on and take it from a later answer.
      const reportedEnd = this.config.isolation === 'read_committed' ? result.lastStableOffset : result.highWatermark
      if (cursor.end === null && reportedEnd >= 0) cursor.end = reportedEnd
      // Split once here: the batch headers give the next fetch offset now, and consume() walks the same list.
      const maxBatchBytes = this.maxUncompressedBytes + BATCH_HEADER_ROOM
      const limits = { from: cursor.fetchAt, highWatermark: result.highWatermark, maxBatchBytes }
      const { batches, corrupt } = splitFetched(result.records, limits)
      for (const { lastOffset } of batches) cursor.fetchAt = Math.max(cursor.fetchAt, lastOffset + 1)
      if (corrupt !== null) cursor.fetchAt = Math.max(cursor.fetchAt, corrupt.lastOffset + 1)
      fetched.push({ cursor, result, batches, corrupt })
    }
    return fetched
  }

  private reportLag(cursor: PartitionCursor, result: FetchedPartition): void {
    const end = this.config.isolation === 'read_committed' ? result.lastStableOffset : result.highWatermark
    if (end >= 0) this.deps.lag?.(cursor.topic, cursor.partition, Math.max(0, end - cursor.position))
  }

  private async highWatermark(topic: string, partition: number): Promise<number> {
    const offsets = await retry(() => this.deps.admin.fetchTopicOffsets(topic), {
      retries: 10,
      initialDelayMs: 100,
      maxDelayMs: 1000,
      shouldRetry: isTransient
    })
    return Number(offsets.find((o) => o.partition === partition)?.high ?? 0)
  }

  private async initialCursors(): Promise<PartitionCursor[]> {
    const cursors: PartitionCursor[] = []
    await this.deps.cluster.addMultipleTargetTopics([...this.config.topics])
    for (const topic of this.config.topics) {
      const partitions = this.deps.cluster.findTopicPartitionMetadata(topic).length
      if (partitions === 0)
        throw new SqueezeError(
          ErrorCodes.SOURCE,
          `topic ${topic} has no partitions in the cluster metadata (does it exist?)`
        )
      let offsets
      try {
        // kafkajs answers from its own metadata cache and returns [] (no error) when a concurrent refresh left
        // the topic out; that would read as an empty topic, so every partition must be there or it asks again.
        offsets = await retry(
          async () => {
            const answer = await this.deps.admin.fetchTopicOffsets(topic)
            if (answer.length !== partitions)
              throw new SqueezeError(
                ErrorCodes.SOURCE,
                `offsets for ${answer.length} of ${partitions} partitions of ${topic}`,
                { retriable: true }
              )
            return answer
          },
          { retries: 10, initialDelayMs: 100, maxDelayMs: 1000 }
        )
      } catch (err) {
        throw new SqueezeError(ErrorCodes.SOURCE, `cannot read offsets of topic ${topic}: ${errorMessage(err)}`, {
          cause: err
        })
      }
      for (const { partition, high } of offsets) {
        // earliest starts at 0 rather than at ListOffsets' answer: a log that retention trimmed answers
        // OFFSET_OUT_OF_RANGE and handleError moves to its start, so no second answer can make a full topic look empty.
        const start = this.config.from === 'earliest' ? 0 : Number(high)
        cursors.push({ topic, partition, position: start, fetchAt: start, end: null })
      }
    }
    return cursors
  }

  private groupByLeader(cursors: PartitionCursor[]): Map<number, PartitionCursor[]> {
    const byLeader = new Map<number, PartitionCursor[]>()
    for (const cursor of cursors) {
      const leader = this.deps.cluster
        .findTopicPartitionMetadata(cursor.topic)
        .find((p) => p.partitionId === cursor.partition)?.leader
      if (leader === undefined || leader < 0) continue
      const group = byLeader.get(leader)
      if (group === undefined) byLeader.set(leader, [cursor])
      else group.push(cursor)
    }
    return byLeader
  }

  private async fetchFrom(
    leader: number,
    cursors: PartitionCursor[]
  ): Promise<Array<{ cursor: PartitionCursor; result: FetchedPartition }>> {
    const broker = await this.deps.cluster.findBroker({ nodeId: leader })
    const { request, response } = fetchRequest({
      maxWaitMs: this.config.maxWaitMs,
      minBytes: 1,
      maxBytes: this.config.maxBytes,
      isolationLevel:
        this.config.isolation === 'read_committed' ? ISOLATION.READ_COMMITTED : ISOLATION.READ_UNCOMMITTED,
      partitions: cursors.map((c) => ({
        topic: c.topic,
        partition: c.partition,
        offset: c.fetchAt,
        maxBytes: this.config.partitionMaxBytes
      }))
    })
    const results: FetchedPartition[] = await broker.connectionPool.send({ request, response })
    const fetched: Array<{ cursor: PartitionCursor; result: FetchedPartition }> = []
    for (const result of results) {
      const cursor = cursors.find((c) => c.topic === result.topic && c.partition === result.partition)
      if (cursor !== undefined) fetched.push({ cursor, result })
    }
    return fetched
  }

  private async consume(
    cursor: PartitionCursor,
    batches: readonly FetchedBatch[],
    aborted: AbortedTransactions,
    handlers: ReaderHandlers
  ): Promise<void> {
    for (const { bytes, baseOffset, lastOffset } of batches) {
      // Revoked while an earlier batch's handler was awaited: the rest belongs to the partition's next owner.
      if (lastOffset < cursor.position || cursor.revoked === true) continue
      const before = this.cpuSeconds()
      let batch: ReadBatch
      let abortMarker: boolean
      try {
        // A fetch from the middle of a batch returns the whole batch; records before the position were seen already.
        batch = readBatch(bytes, {
          verifyCrc: this.config.verifyCrc,
          fromOffset: cursor.position,
          cpuSeconds: this.cpuSeconds,
          maxUncompressedBytes: this.maxUncompressedBytes,
          ...(this.scratch === null ? {} : { into: this.scratch })
        })
        abortMarker = batch.isControl && isAbortMarker(bytes)
      } catch (err) {
        await this.skipCorrupt(cursor, { baseOffset, lastOffset, error: asSqueezeError(err) }, handlers, bytes)
        continue
      }
      const spent = this.cpuSeconds() - before
      cursor.position = lastOffset + 1
      // A batch larger than the reused buffer was decompressed into its own; the next one of that size fits.
      if (this.scratch !== null && batch.uncompressedBytes > this.scratch.length)
        this.scratch = Buffer.allocUnsafe(batch.uncompressedBytes)
      // Per answer, not per cursor: the broker lists every aborted transaction overlapping the answer, and
      // read_uncommitted answers list none, so nothing is skipped there.
      const event = {
        topic: cursor.topic,
        partition: cursor.partition,
        batch,
        framingCpuSeconds: Math.max(0, spent - batch.decompressCpuSeconds)
      }
      handlers.onStoredBatch?.(event)
      const { isTransactional, isControl, producerId } = batch
      const handled = aborted.skips({ isTransactional, isControl, producerId, lastOffset, isAbortMarker: abortMarker })
        ? handlers.onAbortedBatch?.({ topic: cursor.topic, partition: cursor.partition, lastOffset })
        : handlers.onBatch(event)
      if (handled instanceof Promise) await handled
    }
  }

  /** Counts a batch that cannot be read, hands it to the handlers, and moves the partition past it. */
  private async skipCorrupt(
    cursor: PartitionCursor,
    corrupt: CorruptFraming,
    handlers: ReaderHandlers,
    bytes?: Buffer
  ): Promise<void> {
    const { baseOffset, lastOffset, error } = corrupt
    if (lastOffset < cursor.position || cursor.revoked === true) return
    const { topic, partition } = cursor
    const reason = skipReason(error)
    const where = `${topic}-${partition} batch at offsets ${baseOffset}..${lastOffset}`
    const named = new SqueezeError(error.code, `${where}: ${error.message}`, { cause: error })
    this.deps.metrics?.batchSkipped(topic, reason)
    const event = {
      topic,
      partition,
      baseOffset,
      lastOffset,
      error: named,
      reason,
      ...(bytes === undefined ? {} : { bytes })
    }
    await handlers.onCorruptBatch(event)
    cursor.position = lastOffset + 1
  }

  private async handleError(cursor: PartitionCursor, code: number, signal: AbortSignal | undefined): Promise<void> {
    if (code === KafkaErrorCode.OFFSET_OUT_OF_RANGE) {
      const offsets = await this.deps.admin.fetchTopicOffsets(cursor.topic)
      const low = Number(offsets.find((o) => o.partition === cursor.partition)?.low ?? cursor.position)
      const { topic, partition, position } = cursor
      // Below the log start, retention deleted records this reader never saw: said once per move, with how many.
      const gapRecords = Math.max(0, low - position)
      if (gapRecords > 0) {
        this.deps.metrics?.offsetReset(topic, partition, gapRecords)
        this.deps.log.warn(
          { topic, partition, position, logStart: low, gapRecords },
          `${topic}-${partition}: offset ${position} ` +
            `is below the log start ${low}; ${gapRecords} records were deleted (retention) before they were read`
        )
      } else {
        this.deps.log.warn(
          { topic, partition, position, logStart: low },
          'offset out of range; moving to the earliest offset'
        )
      }
      cursor.position = low
      cursor.fetchAt = cursor.position
      return
    }
    if (!isRetriableKafkaError(code)) {
      throw new SqueezeError(
        ErrorCodes.SOURCE,
        `fetch from ${cursor.topic}-${cursor.partition} failed: ${describeKafkaError(code)}`
      )
    }
    await this.deps.cluster.refreshMetadata().catch(() => undefined)
    await sleep(100, signal)
  }
}

/** Read anew after an await: a handler's await may let the group revoke the partition meanwhile. */
function isRevoked(cursor: PartitionCursor): boolean {
  return cursor.revoked === true
}

/** Room for a batch's header and log overhead on top of its records section, in a stored batch's largest length. */
const BATCH_HEADER_ROOM = 64

function asSqueezeError(err: unknown): SqueezeError {
  if (err instanceof SqueezeError) return err
  return new SqueezeError(ErrorCodes.BATCH_CORRUPT, errorMessage(err), { cause: err })
}

/** One partition's answer in a round, split into its complete batches (none when the answer is an error). */
interface FetchedPartitionRound {
  readonly cursor: PartitionCursor
  readonly result: FetchedPartition
  readonly batches: readonly FetchedBatch[]
  /** The batch whose framing ended the split, skipped after the good ones. */
  readonly corrupt: CorruptFraming | null
}

/** A round's answers per partition, or 'done' once every partition reached its end. */
type FetchedRound = FetchedPartitionRound[] | 'done'
