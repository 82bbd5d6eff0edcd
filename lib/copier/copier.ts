import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { AbortedBatchEvent, BatchEvent, CorruptBatchEvent, PartitionReader } from '../consumer/partition-reader.js'
import { ErrorCodes, SqueezeError, errorCode, errorMessage } from '../errors.js'
import { GroupCoordinator } from '../group/coordinator.js'
import { chooseProtocol, commitAsMember, fetchIdentity, type GroupProtocol, type Member } from '../group/member.js'
import type { TopicPartition } from '../group/membership.js'
import type { GroupMemberIdentity } from '../kafka/txn-offset-commit.js'
import type { OpenBatch } from '../protocol/record-batch-builder.js'
import type { RawRecords } from '../protocol/record.js'
import type { AckedBatch } from '../producer/producer.js'
import { sleep } from '../retry.js'
import { AtLeastOnceCommits } from './commit-at-least-once.js'
import type { CommitStrategy } from './commit-strategy.js'
import { TransactionalCommits } from './commit-transactional.js'
import type { CopierConfig, CopierDeps, CopierStats, SourceOffset } from './copier-config.js'
import { FanOut } from './fan-out.js'
import { CopyProgress } from './copy-progress.js'
import { joinCopierGroup, openSourceReader } from './copier-wiring.js'
import { Refusals, validateRefusedPolicy } from './refused-policy.js'
import { fetchSourceRange } from './source-range.js'

export {
  COPIER_PRODUCER_DEFAULTS,
  COPY_BATCHING,
  REFUSED_POLICIES,
  defaultDestination,
  type CopierConfig,
  type CopierDeps,
  type CopierStats,
  type CopyBatching,
  type CopyTarget,
  type RefusedPolicy
} from './copier-config.js'

const NO_RECORDS: RawRecords = {
  count: 0,
  bytes: Buffer.alloc(0),
  offsets: new Float64Array(0),
  timestamps: new Float64Array(0),
  starts: new Int32Array(0),
  ends: new Int32Array(0),
  dataBytes: new Int32Array(0)
}
/** Source records copied between two turns of the event loop within one batch; also where a stop can cut in. */
const YIELD_EVERY_RECORDS = 256
/**
 * Mirrors a source topic into one topic per codec/level: same partition, key, value, headers and timestamp.
 * Source offsets are committed by a commit strategy: only after every target acknowledged the records before them
 * (at-least-once), or inside the same Kafka transaction as the copies (exactly-once). Copiers of one group split
 * the source partitions (squeeze's own group membership, lib/group) and read them with squeeze's own fetches. A
 * slow target slows the source: the producer's send() waits while its buffer.memory is full, and the reader waits
 * on it.
 */
export class Copier {
  private readonly stats: CopierStats = {
    sourceRecords: 0,
    sourceBytes: 0,
    commits: 0,
    aborts: 0,
    refused: 0,
    fencedCommits: 0,
    skippedBatches: 0,
    firstTimestamp: Number.POSITIVE_INFINITY,
    lastTimestamp: 0,
    decompressCpuSeconds: 0
  }
  private readonly progress = new CopyProgress()
  private lastCommitAt = Date.now()
  /** Set once the copy stops (done, aborted or failed): what is being copied ends at its next cut. */
  private readonly stop = new AbortController()
  private failure: unknown = null
  private readonly acked: AckedBatch[] = []
  /** Copying, committing and every change of assignment run one at a time, in this chain. */
  private lane: Promise<void> = Promise.resolve()
  private member: Member | null = null
  private coordinator: GroupCoordinator | null = null
  private protocol: GroupProtocol = 'consumer'
  private reader: PartitionReader | null = null
  /**
   * Hands source records to every target; at-least-once, it knows the source offset of each copy sent since the
   * last commit.
   */
  private readonly fanOut: FanOut
  private readonly refusals: Refusals
  private readonly strategy: CommitStrategy
  /**
   * The periodic commit under way when the strategy commits behind: it waits for the acknowledgements of what was
   * copied before it started, outside the lane, while the copy goes on into new batches. Every other commit waits
   * for it first.
   */
  private committing: Promise<void> | null = null

  constructor(
    private readonly config: CopierConfig,
    private readonly deps: CopierDeps
  ) {
    validateRefusedPolicy(config)
    const { producer, log, metrics } = deps
    const destinations = config.targets.map((t) => t.topic)
    this.fanOut = new FanOut(producer, {
      sourceTopic: config.sourceTopic,
      destinations,
      exactlyOnce: config.exactlyOnce
    })
    producer.onBatchAcked((batch) => this.acked.push(batch))
    const fanOut = this.fanOut
    this.refusals = new Refusals(config, {
      producer,
      fanOut,
      log,
      stats: this.stats,
      ...(metrics === undefined ? {} : { metrics })
    })
    const context = {
      producer,
      groupId: config.groupId,
      asMember: (commit: (member: GroupMemberIdentity) => Promise<void>) => this.asMember(commit),
      stopping: () => this.stopping
    }
    this.strategy = config.exactlyOnce
      ? new TransactionalCommits(context)
      : new AtLeastOnceCommits({ ...context, fanOut, refusals: this.refusals, coordinator: () => this.coordinator })
  }

  snapshot(): Readonly<CopierStats> {
    return { ...this.stats }
  }

  /** Per source partition, the next offset not copied: the end of the source range the copy read. */
  copiedUpTo(): ReadonlyMap<number, number> {
    return this.progress.copiedUpTo()
  }

  /** The source partitions this copier owns now. */
  assignment(): number[] {
    return this.progress.ownedPartitions().sort((a, b) => a - b)
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
    this.progress.setRange(await fetchSourceRange(this.deps.admin, sourceTopic))
    const onAbort = (): void => this.stop.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    // An abort while the offsets above were being fetched fired before the listener existed.
    if (signal?.aborted === true) this.stop.abort()
    const coordinator = this.deps.coordinator ?? new GroupCoordinator(this.deps.cluster, groupId)
    this.coordinator = coordinator
    this.protocol = await chooseProtocol(coordinator, this.config.groupProtocol)
    this.deps.log.info({ groupId, protocol: this.protocol }, 'joining the group')
    const member = joinCopierGroup(this.config, this.deps, {
      coordinator,
      protocol: this.protocol,
      listener: {
        onAssigned: (partitions) => this.exclusive(() => this.assign(partitions)),
        onRevoked: (partitions) => this.exclusive(() => this.revoke(partitions)),
        onLost: (partitions) => this.exclusive(() => this.lose(partitions))
      }
    })
    this.member = member
    const reader = openSourceReader(this.config, this.deps)
    this.reader = reader
    this.strategy.start()
    const handlers = {
      onBatch: (event: BatchEvent) => this.exclusive(() => this.copyBatch(event)),
      onAbortedBatch: ({ partition, lastOffset }: AbortedBatchEvent) =>
        this.exclusive(async () => this.progress.passed(partition, lastOffset)),
      onCorruptBatch: (event: CorruptBatchEvent) => this.unreadable(event)
    }
    // Whichever ends first (done, aborted, failed) stops the others; leaving the group commits what was copied.
    const tasks = [reader.run(handlers, this.stop.signal), member.run(this.stop.signal), this.tick(this.stop.signal)]
    try {
      await Promise.all(
        tasks.map((task) => task.catch((err: unknown) => this.fail(err)).finally(() => this.stop.abort()))
      )
      await this.lane
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
    await this.finish()
  }

  /** Once every task ended: commits what is still held, closes the strategy and reports a failure. */
  private async finish(): Promise<void> {
    // Leaving the group committed what it gave up (onRevoked); partitions still held mean the leave did not happen.
    if (this.failure === null && this.progress.ownedPartitions().length > 0)
      await this.commit().catch((err: unknown) => this.fail(err))
    await this.strategy.close().catch(() => undefined)
    if (this.failure === null) return
    if (this.failure instanceof SqueezeError) throw this.failure
    throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `copy failed: ${errorMessage(this.failure)}`, {
      cause: this.failure
    })
  }

  /** Every 200 ms: is the copy done, is a commit due, and (--until-end) where other members stand. */
  private async tick(signal: AbortSignal): Promise<void> {
    let othersCheckedAt = 0
    while (await sleep(Math.min(200, this.config.commitIntervalMs), signal)) {
      if (this.isCaughtUp()) {
        this.stop.abort()
        return
      }
      if (Date.now() - this.lastCommitAt >= this.config.commitIntervalMs && this.committing === null) {
        await this.exclusive(() => (this.strategy.commitsBehind ? this.commitBehind() : this.commit()))
      }
      // --until-end across several copiers: a partition another copier owns is done once the group committed its end.
      if (this.config.stopAtEnd && this.progress.ownDone() && Date.now() - othersCheckedAt >= 1000) {
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
    return this.progress.reachedEnd()
  }

  private async refreshOthers(): Promise<void> {
    const others = this.progress.notOwned().map((partition) => ({ topic: this.config.sourceTopic, partition }))
    if (others.length === 0 || this.coordinator === null) return
    for (const { partition, offset } of await this.coordinator.committedOffsets(null, others)) {
      if (offset !== null) this.progress.committedElsewhere(partition, offset)
    }
  }

  /** New partitions: each starts at the group's committed offset, or at the partition's start. */
  private async assign(partitions: readonly TopicPartition[]): Promise<void> {
    if (this.member === null || this.coordinator === null || this.reader === null) return
    const committed = await this.coordinator.committedOffsets(fetchIdentity(this.protocol, this.member), partitions)
    const starts = committed.map(({ topic, partition, offset }) => ({
      topic,
      partition,
      offset: this.progress.take(partition, offset)
    }))
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
    if (this.strategy.rewindsOnLoss && this.failure === null) await this.abortAndRewind()
  }

  private drop(partitions: readonly number[]): void {
    this.reader?.revoke(partitions.map((partition) => ({ topic: this.config.sourceTopic, partition })))
    this.progress.drop(partitions)
  }

  private async abortAndRewind(): Promise<void> {
    const processed = this.progress.describe()
    this.deps.log.warn({ processed }, 'aborting the open transaction and rewinding to committed offsets')
    if (await this.strategy.abandon(true)) this.stats.aborts++
    const kept = this.progress
      .rewind()
      .map(({ partition, offset }) => ({ topic: this.config.sourceTopic, partition, offset }))
    this.reader?.revoke(kept)
    await this.reader?.assign(kept)
  }

  private async copyBatch({ partition, batch }: BatchEvent): Promise<void> {
    if (this.stopping || !this.progress.owns(partition)) return
    this.stats.decompressCpuSeconds += batch.decompressCpuSeconds
    const from = this.progress.next(partition)
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
        this.refusals.add(await this.fanOut.send(partition, records, i, to))
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
    this.progress.passed(partition, batch.lastOffset)
    this.deps.onProgress?.(this.stats)
  }

  /** A source batch that cannot be read follows --on-refused (see Refusals); skipped, it counts and is passed. */
  private async unreadable(event: CorruptBatchEvent): Promise<void> {
    this.refusals.checkUnreadable(event)
    await this.exclusive(async () => {
      this.stats.skippedBatches++
      this.refusals.skipUnreadable(event)
      this.progress.passed(event.partition, event.lastOffset)
    })
  }

  /** Copies a source batch as one batch per destination (batching 'source'), its records section compressed anew. */
  private async copyWhole(partition: number, records: RawRecords, whole: OpenBatch, lastOffset: number): Promise<void> {
    try {
      this.refusals.add(await this.fanOut.sendBatch(partition, records, whole))
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
    this.progress.passed(partition, lastOffset)
    this.deps.onProgress?.(this.stats)
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
      if ((maxRecords !== undefined && count >= maxRecords) || (maxBytes !== undefined && bytes >= maxBytes))
        return i + 1
    }
    return to
  }

  private account(records: RawRecords, from: number, to: number, partition: number): void {
    if (to <= from) return
    this.progress.copiedTo(partition, (records.offsets[to - 1] as number) + 1)
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
   * Commits the source offsets of everything copied, as the strategy does. A commit refused as fenced (the group
   * gave the partitions to another copier) drops every partition and rejoins: the next owner copies from the last
   * accepted commit.
   */
  private async commit(): Promise<void> {
    await this.committing
    // Exactly-once, once the copy stopped: the last transaction is committed and no other begins.
    if (!this.strategy.canCommit()) return
    const offsets = this.uncommitted()
    try {
      await this.strategy.commit(this.sourceOffsets(offsets), 'drain')
    } catch (err) {
      if (errorCode(err) !== ErrorCodes.GROUP_FENCED) throw err
      await this.fenced(err)
      return
    }
    this.recordCommit(offsets)
  }

  /**
   * The periodic commit, called in the lane: takes the offsets copied so far and sends every open batch now, then
   * leaves the lane. The acknowledgements, the failures and the coordinator's commit are waited for in the
   * background while the copy goes on, instead of every batch being drained with the copy stopped.
   */
  private async commitBehind(): Promise<void> {
    const offsets = this.uncommitted()
    const acknowledged = this.strategy.commit(this.sourceOffsets(offsets), 'behind')
    this.lastCommitAt = Date.now()
    const settled = acknowledged.then(
      () => this.recordCommit(offsets),
      (err: unknown) => {
        // Fenced: dropping the partitions changes what the copy owns, so it waits its turn in the lane.
        if (errorCode(err) !== ErrorCodes.GROUP_FENCED) this.fail(err)
        else void this.exclusive(() => this.fenced(err)).catch((e: unknown) => this.fail(e))
      }
    )
    this.committing = settled.finally(() => {
      this.committing = null
    })
  }

  private recordCommit(offsets: ReadonlyArray<[number, number]>): void {
    this.progress.recordCommit(offsets)
    this.lastCommitAt = Date.now()
    this.stats.commits++
  }

  /** Per source partition, the offset copied up to where it differs from the last commit's. */
  private uncommitted(): Array<[number, number]> {
    const offsets = this.progress.uncommitted()
    this.deps.log.debug({ offsets: Object.fromEntries(offsets) }, 'committing')
    return offsets
  }

  private sourceOffsets(offsets: ReadonlyArray<[number, number]>): SourceOffset[] {
    return offsets.map(([partition, offset]) => ({ topic: this.config.sourceTopic, partition, offset }))
  }

  private async asMember(commit: (member: GroupMemberIdentity) => Promise<void>): Promise<void> {
    if (this.member !== null) await commitAsMember(this.member, commit, () => this.stopping)
  }

  private async fenced(err: unknown): Promise<void> {
    this.stats.fencedCommits++
    const partitions = this.progress.ownedPartitions()
    const message = 'commit refused: this copier no longer owns its partitions; dropping them and rejoining'
    this.deps.log.warn({ err: errorMessage(err), partitions }, message)
    if (await this.strategy.abandon(!this.stopping)) this.stats.aborts++
    this.drop(partitions)
    this.member?.rejoin()
    // Refused as the copy ends, nothing rejoins: --until-end did not reach a committed end, which exit 0 would claim.
    if (this.stopping && this.config.stopAtEnd) {
      const lost = this.config.exactlyOnce ? 'its transaction was aborted' : 'their source offsets were not committed'
      this.fail(
        new SqueezeError(
          ErrorCodes.GROUP_FENCED,
          `the last commit was refused as fenced (${errorMessage(err)}): the copies since the commit before it are ` +
            `not committed (${lost}); run the copy again to copy them`,
          { cause: err }
        )
      )
    }
  }
}
