import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { Admin } from 'kafkajs'
import { formatCodecSpec, type CodecSpec } from '../codecs/index.js'
import { DEFAULT_READER_CONFIG, PartitionReader, type AbortedBatchEvent, type BatchEvent, type CorruptBatchEvent } from '../consumer/partition-reader.js'
import { ErrorCodes, SqueezeError, errorCode, errorMessage, isTransient } from '../errors.js'
import { GroupCoordinator } from '../group/coordinator.js'
import { chooseProtocol, commitAsMember, createMember, fetchIdentity, type GroupProtocol, type Member } from '../group/member.js'
import type { TopicPartition } from '../group/membership.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { GroupMemberIdentity } from '../kafka/txn-offset-commit.js'
import type { Logger } from '../log/logger.js'
import type { CopierMetrics } from '../metrics/copier-metrics.js'
import type { ReaderMetricsSink } from '../metrics/reader-metrics.js'
import { toDeadLetter, type PoisonRecord } from '../protocol/dead-letter.js'
import type { OpenBatch } from '../protocol/record-batch-builder.js'
import type { RawRecords } from '../protocol/record.js'
import { isRecordRefusal, type AckedBatch, type DeliveryFailure, type Producer } from '../producer/producer.js'
import { COORDINATOR_RETRY, retry, sleep } from '../retry.js'
import { FanOut } from './fan-out.js'
import type { SentOffsets } from './sent-offsets.js'

/** One destination: a codec and level, and the topic it writes. */
export interface CopyTarget {
  readonly spec: CodecSpec
  readonly topic: string
}

const NO_RECORDS: RawRecords = { count: 0, bytes: Buffer.alloc(0), offsets: new Float64Array(0), timestamps: new Float64Array(0), starts: new Int32Array(0), ends: new Int32Array(0), dataBytes: new Int32Array(0) }
/** Source records copied between two turns of the event loop within one batch; also where a stop can cut in. */
const YIELD_EVERY_RECORDS = 256
/**
 * Per source partition and fetch. A fetch's records stay in memory decompressed until copied, and 1 MiB (10 MB
 * once decompressed per partition) raises the copier's peak RSS well above this size's, at the same speed. A larger batch still comes whole (Kafka returns at least one).
 */
const PARTITION_FETCH_BYTES = 256 * 1024
/** The largest stored batch a dead letter carries: below the producer's default max.request.size. */
const DEAD_LETTER_BATCH_BYTES = 512 * 1024
/** The Java client's max.poll.interval.ms: how long a member may take to give up revoked partitions. */
const DEFAULT_REBALANCE_TIMEOUT_MS = 300_000

/**
 * What becomes of a record a destination refuses as it is (over that topic's max.message.bytes, or invalid
 * there): stop the copy (Kafka Connect's errors.tolerance=none), count and skip it, or write it to a dead-letter
 * topic. Either of the last two lets source offsets move past it, so a restart does not meet it again.
 */
export const REFUSED_POLICIES = ['fail', 'skip', 'dead-letter'] as const
export type RefusedPolicy = (typeof REFUSED_POLICIES)[number]

/**
 * How copies are batched. 'source': each source batch that can be taken whole becomes one destination batch, its
 * records section decompressed once and compressed again per destination, not re-encoded record by record
 * (batches that cannot, such as compacted ones, are re-batched). 'rebatch': records go into batches of the
 * destinations' own linger.ms and batch.size, as a producer of that configuration would write them.
 */
export const COPY_BATCHING = ['source', 'rebatch'] as const
export type CopyBatching = (typeof COPY_BATCHING)[number]

export interface CopierConfig {
  readonly sourceTopic: string
  readonly groupId: string
  readonly targets: readonly CopyTarget[]
  /** Transactions: each destination holds each source record exactly once for read_committed readers. */
  readonly exactlyOnce: boolean
  /** How often source offsets are committed (after every target acknowledged what came before). */
  readonly commitIntervalMs: number
  /** Stop once every source partition reaches the end offset it had at start (a comparison run). */
  readonly stopAtEnd: boolean
  /** Stop after this many source records (a comparison budget). */
  readonly maxRecords?: number
  /** Stop after this many uncompressed source bytes (key + value + headers). */
  readonly maxBytes?: number
  /**
   * Classic protocol only: how long a dead copier's partitions wait before moving (default 10 s). The new
   * protocol's session is the broker's group.consumer.session.timeout.ms (45 s by default).
   */
  readonly sessionTimeoutMs?: number
  /** -X group.protocol: unset, the new protocol (KIP-848) where the group coordinator serves it, else classic. */
  readonly groupProtocol?: GroupProtocol
  /** -X max.poll.interval.ms: how long this copier may take to commit and give up revoked partitions. */
  readonly rebalanceTimeoutMs?: number
  /** Default 'fail'. 'skip' and 'dead-letter' need at-least-once: a refusal aborts the whole transaction. */
  readonly onRefused?: RefusedPolicy
  /** Where refused records go with 'dead-letter', unchanged, with the error and their origin in headers. */
  readonly deadLetterTopic?: string
  /** What a source batch that cannot be read gets: onRefused's policy unless given. */
  readonly onUnreadable?: RefusedPolicy
  /** squeeze.max.batch.uncompressed.bytes: the reader's default (from its fetch size) when left out. */
  readonly maxBatchUncompressedBytes?: number
  /** Default 'rebatch' (what compare measures); `squeeze copy` defaults to 'source'. */
  readonly batching?: CopyBatching
}

export interface CopierStats {
  sourceRecords: number
  sourceBytes: number
  commits: number
  aborts: number
  /** Copies a destination refused (one per record and destination), skipped or sent to the dead-letter topic. */
  refused: number
  /** Commits the group coordinator refused because this copier no longer owned the partitions (KIP-447 fencing). */
  fencedCommits: number
  /** Source batches that could not be read (over the decompression cap, corrupt), skipped as --on-refused allows. */
  skippedBatches: number
  firstTimestamp: number
  lastTimestamp: number
  /** CPU the source batches' decompression took (once per batch, whatever the number of targets). */
  decompressCpuSeconds: number
}

export interface CopierDeps {
  /** The source's cluster: fetches and the group coordinator's calls go through its connections. */
  readonly cluster: KafkajsCluster
  readonly admin: Admin
  /** One producer for every target (per-topic codecs), transactional when exactly-once. */
  readonly producer: Producer
  readonly log: Logger
  readonly metrics?: CopierMetrics
  /** squeeze_batches_skipped_total and the log-start gap, as every reader reports them. */
  readonly readerMetrics?: ReaderMetricsSink
  readonly onProgress?: (stats: Readonly<CopierStats>) => void
  /** The group's coordinator; by default one on `cluster`. */
  readonly coordinator?: GroupCoordinator
}

/**
 * Producer defaults the copier differs in. It compresses on the event loop: with one source fanned out to six
 * targets x 3 partitions, the compression thread's buffers crossing threads (each thread has its own malloc
 * arena) cost more peak RSS than the little speed they gain while a broker on the same cores is the limit. -X squeeze.compression.threads=N turns threads back on.
 */
export const COPIER_PRODUCER_DEFAULTS = { compressionThreads: 0 } as const

export function defaultDestination(source: string, spec: CodecSpec): string {
  return `${source}.${formatCodecSpec(spec).replace(':', '-')}`
}

/**
 * Mirrors a source topic into one topic per codec/level: same partition, key, value, headers and timestamp.
 * Source offsets are committed only after every target acknowledged the records before them (at-least-once),
 * or inside the same Kafka transaction as the copies (exactly-once), whose offsets carry this member's id and
 * epoch so a copier that lost its partitions cannot commit them (KIP-447). Copiers of one group split the source
 * partitions (squeeze's own group membership, lib/group) and read them with squeeze's own fetches. A slow target
 * slows the source: the producer's send() waits while its buffer.memory is full, and the reader waits on it.
 */
export class Copier {
  private readonly stats: CopierStats = {
    sourceRecords: 0, sourceBytes: 0, commits: 0, aborts: 0, refused: 0, fencedCommits: 0, skippedBatches: 0,
    firstTimestamp: Number.POSITIVE_INFINITY, lastTimestamp: 0, decompressCpuSeconds: 0
  }
  /** Next offset to copy per source partition this copier owns (what a commit would record). */
  private readonly processed = new Map<number, number>()
  /** The group's committed offset per partition, as this copier last committed or fetched it. */
  private readonly committed = new Map<number, number>()
  /** Where each source partition started and ended when the copy started. */
  private sourceRange = new Map<number, { low: number; high: number }>()
  /** The source partitions the group assigned to this copier. */
  private readonly owned = new Set<number>()
  private lastCommitAt = Date.now()
  /** Set once the copy stops (done, aborted or failed): what is being copied ends at its next cut. */
  private readonly stop = new AbortController()
  private failure: unknown = null
  private transactionOpen = false
  private readonly acked: AckedBatch[] = []
  /** Copying, committing and every change of assignment run one at a time, in this chain. */
  private lane: Promise<void> = Promise.resolve()
  private member: Member | null = null
  private coordinator: GroupCoordinator | null = null
  private protocol: GroupProtocol = 'consumer'
  private reader: PartitionReader | null = null
  /** Hands source records to every target; at-least-once, it knows the source offset of each copy sent since the last commit. */
  private readonly fanOut: FanOut
  /** Delivery failures since the last commit, sorted out there. */
  private readonly failures: DeliveryFailure[] = []
  /** Copies refused since the last commit: by send() at once, or by a destination (found at commit). */
  private readonly refused: PoisonRecord[] = []
  /** The failure the copy stopped at, at-least-once: every later commit fails with it. */
  private unsettled: unknown = null
  /**
   * At-least-once, the periodic commit under way: it waits for the acknowledgements of what was copied before it
   * started, outside the lane, while the copy goes on into new batches. Every other commit waits for it first.
   */
  private committing: Promise<void> | null = null

  constructor(private readonly config: CopierConfig, private readonly deps: CopierDeps) {
    if (config.exactlyOnce && (config.onRefused ?? 'fail') !== 'fail') {
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `refused records can be skipped or dead-lettered in at-least-once mode only (a refusal aborts the whole transaction); drop --exactly-once or --on-refused ${config.onRefused}`)
    }
    if (config.onRefused === 'dead-letter' && config.deadLetterTopic === undefined) {
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--on-refused dead-letter needs --dead-letter-topic')
    }
    this.fanOut = new FanOut(deps.producer, { sourceTopic: config.sourceTopic, destinations: config.targets.map((t) => t.topic), exactlyOnce: config.exactlyOnce })
    deps.producer.onBatchAcked((batch) => this.acked.push(batch))
    // In a transaction any failure fails the commit (the producer aborts it), so there is nothing to sort out.
    if (!config.exactlyOnce) deps.producer.onDeliveryFailure((failure) => this.failures.push(failure))
  }

  snapshot(): Readonly<CopierStats> {
    return { ...this.stats }
  }

  /** Per source partition, the next offset not copied: the end of the source range the copy read. */
  copiedUpTo(): ReadonlyMap<number, number> {
    return new Map([...this.committed, ...this.processed])
  }

  /** The source partitions this copier owns now. */
  assignment(): number[] {
    return [...this.owned].sort((a, b) => a - b)
  }

  /** Every batch a destination acknowledged, for the recompression and stored-bytes checks. */
  ackedBatches(): readonly AckedBatch[] {
    return this.acked
  }

  /**
   * Joins the group and copies the partitions it assigns until the budget or the end is reached, or `signal`
   * aborts; then commits what was copied, leaves the group and resolves.
   */
  async run(signal?: AbortSignal): Promise<void> {
    const { sourceTopic, groupId } = this.config
    this.sourceRange = await this.sourceOffsets()
    const onAbort = (): void => this.stop.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    // An abort while the offsets above were being fetched fired before the listener existed.
    if (signal?.aborted === true) this.stop.abort()
    const coordinator = this.deps.coordinator ?? new GroupCoordinator(this.deps.cluster, groupId)
    this.coordinator = coordinator
    this.protocol = await chooseProtocol(coordinator, this.config.groupProtocol)
    this.deps.log.info({ groupId, protocol: this.protocol }, 'joining the group')
    // A 10 s classic session (Kafka's default minimum is 6 s) lets a restarted copier take over a dead one's partitions quickly.
    const sessionTimeoutMs = this.config.sessionTimeoutMs ?? 10_000
    const member = createMember(
      { groupId, topics: [sourceTopic], protocol: this.protocol, rebalanceTimeoutMs: this.config.rebalanceTimeoutMs ?? DEFAULT_REBALANCE_TIMEOUT_MS, sessionTimeoutMs, heartbeatIntervalMs: Math.max(100, Math.floor(sessionTimeoutMs / 10)) },
      {
        coordinator,
        cluster: this.deps.cluster,
        log: this.deps.log,
        listener: {
          onAssigned: (partitions) => this.exclusive(() => this.assign(partitions)),
          onRevoked: (partitions) => this.exclusive(() => this.revoke(partitions)),
          onLost: (partitions) => this.exclusive(() => this.lose(partitions))
        },
        onRebalance: () => {
          this.deps.metrics?.rebalance()
          this.deps.metrics?.assigned(member.assignment)
        }
      }
    )
    this.member = member
    // maxWaitMs: the long poll is also how long a stop waits for the fetch on the wire. reuseBatchMemory: a batch's
    // records are copied into the destinations' batches before its handler returns (a refused one into memory of
    // its own), so every batch can be decompressed into the same buffer instead of a fresh one.
    const reader = new PartitionReader(
      {
        ...DEFAULT_READER_CONFIG, topics: [sourceTopic], partitions: 'assigned', untilEnd: false, isolation: 'read_committed',
        maxWaitMs: 500,
        partitionMaxBytes: PARTITION_FETCH_BYTES, reuseBatchMemory: true,
        ...(this.config.maxBatchUncompressedBytes === undefined ? {} : { maxBatchUncompressedBytes: this.config.maxBatchUncompressedBytes })
      },
      {
        cluster: this.deps.cluster, admin: this.deps.admin, log: this.deps.log,
        ...(this.deps.metrics === undefined ? {} : { lag: this.deps.metrics.lag }),
        ...(this.deps.readerMetrics === undefined ? {} : { metrics: this.deps.readerMetrics })
      }
    )
    this.reader = reader
    if (this.config.exactlyOnce) this.begin()
    const handlers = {
      onBatch: (event: BatchEvent) => this.exclusive(() => this.copyBatch(event)),
      onAbortedBatch: ({ partition, lastOffset }: AbortedBatchEvent) => this.exclusive(async () => this.passed(partition, lastOffset)),
      onCorruptBatch: (event: CorruptBatchEvent) => this.unreadable(event)
    }
    // Whichever ends first (done, aborted, failed) stops the others; leaving the group commits what was copied.
    const tasks = [reader.run(handlers, this.stop.signal), member.run(this.stop.signal), this.tick(this.stop.signal)]
    try {
      await Promise.all(tasks.map((task) => task.catch((err: unknown) => this.fail(err)).finally(() => this.stop.abort())))
      await this.lane
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
    // Leaving the group committed what it gave up (onRevoked); partitions still held mean the leave did not happen.
    if (this.failure === null && this.owned.size > 0) await this.commit().catch((err: unknown) => this.fail(err))
    if (this.transactionOpen) await this.abort().catch(() => undefined)
    if (this.failure !== null) {
      throw this.failure instanceof SqueezeError ? this.failure : new SqueezeError(ErrorCodes.PRODUCE_FAILED, `copy failed: ${errorMessage(this.failure)}`, { cause: this.failure })
    }
  }

  /** The source's partitions with their first and next offsets: --until-end copies up to the latter. */
  private async sourceOffsets(): Promise<Map<number, { low: number; high: number }>> {
    const { sourceTopic } = this.config
    const offsets = await retry(async () => {
      const { topics } = await this.deps.admin.fetchTopicMetadata({ topics: [sourceTopic] })
      const partitions = topics[0]?.partitions.length ?? 0
      const answer = await this.deps.admin.fetchTopicOffsets(sourceTopic)
      // kafkajs answers from its metadata cache, and [] when a concurrent refresh left the topic out: with
      // --until-end that read as an empty source and the copy ended at once, having copied nothing.
      if (partitions === 0 || answer.length !== partitions) throw new SqueezeError(ErrorCodes.SOURCE, `offsets for ${answer.length} of ${partitions} partitions of ${sourceTopic}`, { retriable: true })
      return answer
    }, { retries: 10, initialDelayMs: 100, maxDelayMs: 1000, shouldRetry: isTransient }).catch((err: unknown) => {
      throw new SqueezeError(ErrorCodes.SOURCE, `cannot read source topic ${sourceTopic}: ${errorMessage(err)}`, { cause: err })
    })
    return new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]))
  }

  /** Every 200 ms: is the copy done, is a commit due, and (--until-end) where other members stand. */
  private async tick(signal: AbortSignal): Promise<void> {
    let othersCheckedAt = 0
    while (await sleep(Math.min(200, this.config.commitIntervalMs), signal)) {
      if (this.isCaughtUp()) {
        this.stop.abort()
        return
      }
      if (Date.now() - this.lastCommitAt >= this.config.commitIntervalMs && this.committing === null) await this.exclusive(() => this.config.exactlyOnce ? this.commit() : this.commitBehind())
      // --until-end across several copiers: a partition another copier owns is done once the group committed its end.
      if (this.config.stopAtEnd && this.ownDone() && Date.now() - othersCheckedAt >= 1000) {
        othersCheckedAt = Date.now()
        await this.refreshOthers()
      }
    }
  }

  /** Runs `work` after everything queued before it: no commit ever lands in the middle of a batch's copies. */
  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.lane.then(work)
    this.lane = next.catch(() => undefined)
    return next
  }

  private fail(err: unknown): void {
    this.failure ??= err
    this.stop.abort()
  }

  private get stopping(): boolean {
    return this.stop.signal.aborted
  }

  private isCaughtUp(): boolean {
    if (this.config.maxRecords !== undefined && this.stats.sourceRecords >= this.config.maxRecords) return true
    if (this.config.maxBytes !== undefined && this.stats.sourceBytes >= this.config.maxBytes) return true
    if (!this.config.stopAtEnd) return false
    for (const [partition, { high }] of this.sourceRange) {
      if ((this.processed.get(partition) ?? this.committed.get(partition) ?? 0) < high) return false
    }
    return true
  }

  private ownDone(): boolean {
    return [...this.owned].every((p) => (this.processed.get(p) ?? 0) >= (this.sourceRange.get(p)?.high ?? 0))
  }

  private async refreshOthers(): Promise<void> {
    const others = [...this.sourceRange.keys()].filter((p) => !this.owned.has(p)).map((partition) => ({ topic: this.config.sourceTopic, partition }))
    if (others.length === 0 || this.coordinator === null) return
    for (const { partition, offset } of await this.coordinator.committedOffsets(null, others)) {
      if (offset !== null && !this.owned.has(partition)) this.committed.set(partition, offset)
    }
  }

  /** New partitions: each starts at the group's committed offset, or at the partition's start. */
  private async assign(partitions: readonly TopicPartition[]): Promise<void> {
    if (this.member === null || this.coordinator === null || this.reader === null) return
    const committed = await this.coordinator.committedOffsets(fetchIdentity(this.protocol, this.member), partitions)
    const starts = committed.map(({ topic, partition, offset }) => {
      if (offset !== null) this.committed.set(partition, offset)
      else this.committed.delete(partition)
      const start = offset ?? this.sourceRange.get(partition)?.low ?? 0
      this.processed.set(partition, start)
      this.owned.add(partition)
      return { topic, partition, offset: start }
    })
    this.deps.log.info({ partitions: starts.map((s) => `${s.partition}@${s.offset}`) }, 'copying assigned partitions')
    await this.reader.assign(starts)
  }

  /**
   * Partitions go to another copier: commit first (the transaction, exactly-once) so it starts where this one
   * stopped. After a failure nothing is committed; the next owner starts from the last commit.
   */
  private async revoke(partitions: readonly TopicPartition[]): Promise<void> {
    if (this.failure === null) await this.commit().catch((err: unknown) => this.fail(err))
    this.drop(partitions.map((tp) => tp.partition))
  }

  /**
   * Fenced: the partitions may be another copier's already and nothing may be committed for them. Exactly-once,
   * the open transaction may hold copies of them, so it is aborted and the partitions kept go back to their
   * committed offsets (their uncommitted copies were in it too).
   */
  private async lose(partitions: readonly TopicPartition[]): Promise<void> {
    this.drop(partitions.map((tp) => tp.partition))
    if (this.config.exactlyOnce && this.failure === null) await this.abortAndRewind()
  }

  private drop(partitions: readonly number[]): void {
    this.reader?.revoke(partitions.map((partition) => ({ topic: this.config.sourceTopic, partition })))
    for (const partition of partitions) {
      this.owned.delete(partition)
      this.processed.delete(partition)
    }
  }

  private async abortAndRewind(): Promise<void> {
    this.deps.log.warn({ processed: Object.fromEntries(this.processed) }, 'aborting the open transaction and rewinding to committed offsets')
    if (this.transactionOpen) await this.abort()
    this.stats.aborts++
    const kept = [...this.owned].map((partition) => ({ topic: this.config.sourceTopic, partition, offset: this.committed.get(partition) ?? this.sourceRange.get(partition)?.low ?? 0 }))
    this.reader?.revoke(kept)
    for (const { partition, offset } of kept) this.processed.set(partition, offset)
    await this.reader?.assign(kept)
    this.begin()
  }

  private begin(): void {
    this.deps.producer.beginTransaction()
    this.transactionOpen = true
  }

  private async abort(): Promise<void> {
    this.transactionOpen = false
    await this.deps.producer.abortTransaction()
  }

  private async copyBatch({ partition, batch }: BatchEvent): Promise<void> {
    if (this.stopping || !this.owned.has(partition)) return
    this.stats.decompressCpuSeconds += batch.decompressCpuSeconds
    const from = this.processed.get(partition) ?? 0
    // A transaction marker holds no record to copy; a destination gets its own markers from the copier's transactions.
    const records = batch.isControl ? NO_RECORDS : batch.raw
    let first = 0
    while (first < records.count && (records.offsets[first] as number) < from) first++
    const whole = first === 0 && this.config.batching === 'source' ? batch.whole : null
    if (whole !== null && this.withinBudget(records, 0, records.count) === records.count) {
      await this.copyWhole(partition, records, whole, batch.lastOffset)
      return
    }
    for (let i = first; i < records.count; i += YIELD_EVERY_RECORDS) {
      if (this.stopping) return
      const to = this.withinBudget(records, i, Math.min(i + YIELD_EVERY_RECORDS, records.count))
      try {
        // A copy the producer refuses before any destination sees it (over max.request.size) is set aside as
        // --on-refused says; in a transaction nothing can be left out, so the fan-out rejects there.
        this.refused.push(...await this.fanOut.send(partition, records, i, to))
      } catch (err) {
        this.fail(err)
        return
      }
      this.account(records, i, to, partition)
      if (this.isCaughtUp()) {
        this.stop.abort()
        return
      }
      // Sends into open batches resolve at once, so without this a batch of thousands of records would hold the
      // event loop from start to end: /metrics unanswered, and no heartbeat within the session.
      await yieldToEventLoop()
    }
    this.passed(partition, batch.lastOffset)
    this.deps.onProgress?.(this.stats)
  }

  /**
   * A source batch that cannot be read follows --on-refused: 'fail' stops the copy with one line that says how to
   * go past it; 'skip' counts it and moves on; 'dead-letter' also sends the stored batch there before the commit.
   */
  private async unreadable({ partition, baseOffset, lastOffset, error, bytes }: CorruptBatchEvent): Promise<void> {
    const policy = this.config.onUnreadable ?? this.config.onRefused ?? 'fail'
    if (policy === 'fail') {
      // BATCH_CORRUPT whatever the cause: a runtime stop (exit 1), not a codec setting to correct (exit 2).
      const reset = `kafka-consumer-groups --reset-offsets --to-offset ${lastOffset + 1} --group ${this.config.groupId} ` +
        `--topic ${this.config.sourceTopic}:${partition} --execute`
      const message = `source batch cannot be copied: ${error.message}. To go past it, run with --on-refused skip ` +
        `(or dead-letter), or move the group past it: ${reset}`
      throw new SqueezeError(ErrorCodes.BATCH_CORRUPT, message, { cause: error })
    }
    await this.exclusive(async () => {
      this.stats.skippedBatches++
      const fields = { partition, baseOffset, lastOffset, code: error.code }
      this.deps.log.warn(fields, `skipping a source batch that cannot be read: ${error.message}`)
      if (policy === 'dead-letter') {
        // Its records cannot be read: the dead letter holds the stored batch, as the consumer's does.
        const value = bytes === undefined || bytes.length > DEAD_LETTER_BATCH_BYTES ? null : Buffer.from(bytes)
        const record = { offset: baseOffset, timestamp: Date.now(), key: null, value, headers: [] }
        this.refused.push({ topic: this.config.sourceTopic, partition, record, code: error.code, reason: error.message })
      }
      this.passed(partition, lastOffset)
    })
  }

  /** Copies a source batch as one batch per destination (batching 'source'), its records section compressed anew. */
  private async copyWhole(partition: number, records: RawRecords, whole: OpenBatch, lastOffset: number): Promise<void> {
    try {
      this.refused.push(...await this.fanOut.sendBatch(partition, records, whole))
    } catch (err) {
      this.fail(err)
      return
    }
    this.account(records, 0, records.count, partition)
    if (this.isCaughtUp()) {
      this.stop.abort()
      return
    }
    await yieldToEventLoop()
    this.passed(partition, lastOffset)
    this.deps.onProgress?.(this.stats)
  }

  /** Past the whole batch: its marker, offsets compaction removed, or an aborted transaction are not copied again nor waited for. */
  private passed(partition: number, lastOffset: number): void {
    // Revoked meanwhile: the partition's offsets are its next owner's to commit.
    if (!this.owned.has(partition)) return
    this.processed.set(partition, Math.max(this.processed.get(partition) ?? 0, lastOffset + 1))
  }

  /** Where records `from` up to `to` stop: just past the one that reaches --records or --bytes. */
  private withinBudget(records: RawRecords, from: number, to: number): number {
    const { maxRecords, maxBytes } = this.config
    if (maxRecords === undefined && maxBytes === undefined) return to
    let count = this.stats.sourceRecords
    let bytes = this.stats.sourceBytes
    for (let i = from; i < to; i++) {
      count++
      bytes += records.dataBytes[i] as number
      if ((maxRecords !== undefined && count >= maxRecords) || (maxBytes !== undefined && bytes >= maxBytes)) return i + 1
    }
    return to
  }

  private account(records: RawRecords, from: number, to: number, partition: number): void {
    if (to <= from) return
    this.processed.set(partition, (records.offsets[to - 1] as number) + 1)
    this.stats.sourceRecords += to - from
    this.deps.metrics?.sourceRecords(this.config.sourceTopic, to - from)
    for (let i = from; i < to; i++) {
      const timestamp = records.timestamps[i] as number
      this.stats.sourceBytes += records.dataBytes[i] as number
      this.stats.firstTimestamp = Math.min(this.stats.firstTimestamp, timestamp)
      this.stats.lastTimestamp = Math.max(this.stats.lastTimestamp, timestamp)
    }
  }

  /**
   * Commits the source offsets of everything copied (exactly-once: with the transaction, the offsets carrying
   * this member's id and epoch). A commit refused as fenced (the group gave the partitions to another copier)
   * aborts, drops every partition and rejoins: the next owner copies from the last accepted commit.
   */
  private async commit(): Promise<void> {
    await this.committing
    // Exactly-once, once the copy stopped: the last transaction is committed and no other begins.
    if (this.config.exactlyOnce && !this.transactionOpen) return
    const offsets = this.uncommitted()
    try {
      if (this.config.exactlyOnce) await this.commitTransaction(this.topicOffsets(offsets))
      else await this.commitAcknowledged(this.deps.producer.flush(), this.fanOut.marks(), this.topicOffsets(offsets))
    } catch (err) {
      if (errorCode(err) !== ErrorCodes.GROUP_FENCED) throw err
      await this.fenced(err)
      return
    }
    this.recordCommit(offsets)
  }

  /**
   * The periodic commit, at-least-once, called in the lane: takes the offsets copied so far and sends every open
   * batch now, then leaves the lane. The acknowledgements, the failures and the coordinator's commit are waited
   * for in the background while the copy goes on, instead of every batch being drained with the copy stopped.
   */
  private async commitBehind(): Promise<void> {
    const offsets = this.uncommitted()
    const acknowledged = this.commitAcknowledged(this.deps.producer.flushAccepted(), this.fanOut.marks(), this.topicOffsets(offsets))
    this.lastCommitAt = Date.now()
    this.committing = acknowledged.then(() => this.recordCommit(offsets), (err: unknown) => {
      // Fenced: dropping the partitions changes what the copy owns, so it waits its turn in the lane.
      if (errorCode(err) === ErrorCodes.GROUP_FENCED) void this.exclusive(() => this.fenced(err)).catch((e: unknown) => this.fail(e))
      else this.fail(err)
    }).finally(() => {
      this.committing = null
    })
  }

  private recordCommit(offsets: ReadonlyArray<[number, number]>): void {
    for (const [partition, offset] of offsets) this.committed.set(partition, offset)
    this.lastCommitAt = Date.now()
    this.stats.commits++
  }

  /** Per source partition, the offset copied up to where it differs from the last commit's. */
  private uncommitted(): Array<[number, number]> {
    const offsets = [...this.processed].filter(([partition, offset]) => this.committed.get(partition) !== offset)
    this.deps.log.debug({ offsets: Object.fromEntries(offsets) }, 'committing')
    return offsets
  }

  private topicOffsets(offsets: ReadonlyArray<[number, number]>): Array<{ topic: string; partition: number; offset: number }> {
    return offsets.map(([partition, offset]) => ({ topic: this.config.sourceTopic, partition, offset }))
  }

  private async commitTransaction(offsets: ReadonlyArray<{ topic: string; partition: number; offset: number }>): Promise<void> {
    if (offsets.length > 0) await this.asMember((member) => this.deps.producer.sendOffsets(this.config.groupId, offsets, member))
    this.transactionOpen = false
    await this.deps.producer.commitTransaction()
    if (!this.stopping) this.begin()
  }

  /** `sent` resolves once every copy before `marks` (where the fan-out stood when the offsets were taken) is acknowledged or failed. */
  private async commitAcknowledged(sent: Promise<void>, marks: ReadonlyMap<SentOffsets, number>, offsets: ReadonlyArray<{ topic: string; partition: number; offset: number }>): Promise<void> {
    await sent
    await this.settleFailures(marks)
    const coordinator = this.coordinator
    if (offsets.length === 0 || coordinator === null) return
    await this.asMember(({ memberId, generationId }) => retry(() => coordinator.commit({ groupId: this.config.groupId, generationIdOrMemberEpoch: generationId, memberId, offsets }), COORDINATOR_RETRY))
  }

  private async asMember(commit: (member: GroupMemberIdentity) => Promise<void>): Promise<void> {
    if (this.member !== null) await commitAsMember(this.member, commit, () => this.stopping)
  }

  private async fenced(err: unknown): Promise<void> {
    this.stats.fencedCommits++
    this.deps.log.warn({ err: errorMessage(err), partitions: [...this.owned] }, 'commit refused: this copier no longer owns its partitions; dropping them and rejoining')
    const partitions = [...this.owned]
    if (this.config.exactlyOnce) {
      if (this.transactionOpen) await this.abort()
      this.stats.aborts++
      if (!this.stopping) this.begin()
    }
    this.drop(partitions)
    this.member?.rejoin()
  }

  /**
   * After a flush, every copy sent is acknowledged or failed. A failure to deliver stops the copy before its
   * offsets are committed (the producer retried what can be retried); a refused record is handled as
   * `onRefused` says, so the commit can go past it.
   */
  private async settleFailures(marks: ReadonlyMap<SentOffsets, number>): Promise<void> {
    // Once the copy cannot go past a failure, no later commit may go past it either (kafkajs can run the batch
    // loop again after the error).
    if (this.unsettled !== null) throw this.unsettled
    try {
      await this.sortOutFailures(marks)
    } catch (err) {
      this.unsettled = err
      throw err
    }
  }

  private async sortOutFailures(marks: ReadonlyMap<SentOffsets, number>): Promise<void> {
    const failures = this.failures.splice(0)
    const fatal = failures.find((f) => !isRecordRefusal(f.error))
    if (fatal !== undefined) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `destination ${fatal.topic} failed to take ${fatal.records} records (${fatal.error.message}); source offsets are not committed past them`, { cause: fatal.error })
    }
    for (const failure of failures) {
      failure.sent.forEach((record, i) => {
        const offset = this.fanOut.sourceOffset(failure.topic, failure.partition, failure.firstRecordIndex + i)
        if (offset === undefined) throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `destination ${failure.topic} refused a record the copier has no source offset for (${failure.error.message})`, { cause: failure.error })
        this.refused.push({ topic: this.config.sourceTopic, partition: failure.partition, record: { ...record, offset }, code: failure.error.code, reason: failure.error.message, destination: failure.topic })
      })
    }
    this.fanOut.forget(marks)
    const refused = this.refused.splice(0)
    if (refused.length === 0) return
    const policy = this.config.onRefused ?? 'fail'
    if (policy === 'fail') {
      const [first] = refused as [PoisonRecord]
      throw new SqueezeError(first.code, `${first.destination} refused the record at ${first.topic}-${first.partition} offset ${first.record.offset}: ${first.reason}; ` +
        'copy it elsewhere with --dead-letter-topic, or --on-refused skip, to go past it')
    }
    for (const poison of refused) {
      this.stats.refused++
      this.deps.metrics?.recordsRefused(poison.destination ?? '', poison.code, 1)
      this.deps.log.warn({ destination: poison.destination, partition: poison.partition, offset: poison.record.offset, code: poison.code }, policy === 'skip' ? 'destination refused a record; skipped' : 'destination refused a record; sent to the dead-letter topic')
    }
    const deadLetterTopic = this.config.deadLetterTopic
    if (policy !== 'dead-letter' || deadLetterTopic === undefined) return
    for (const poison of refused) await this.deps.producer.send({ topic: deadLetterTopic, ...toDeadLetter(poison) })
    await this.deps.producer.flush()
    // Copies sent meanwhile may have failed too: those are the next commit's to sort out.
    const lost = this.failures.find((f) => f.topic === deadLetterTopic)
    this.failures.splice(0, this.failures.length, ...this.failures.filter((f) => f.topic !== deadLetterTopic))
    if (lost !== undefined) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `cannot write refused records to the dead-letter topic ${deadLetterTopic}: ${lost.error.message}`, { cause: lost.error })
    }
  }
}
