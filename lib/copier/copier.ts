import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { Admin, Consumer, EachBatchPayload, IHeaders, Kafka } from 'kafkajs'
import { formatCodecSpec, type CodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError, errorMessage, isTransient } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { CopierMetrics } from '../metrics/copier-metrics.js'
import { toDeadLetter, type PoisonRecord } from '../protocol/dead-letter.js'
import { isRecordRefusal, type AckedBatch, type DeliveryFailure, type Producer } from '../producer/producer.js'
import type { RecordHeader } from '../protocol/record.js'
import { retry } from '../retry.js'
import { SentOffsets } from './sent-offsets.js'
import { PartitionTable } from '../kafka/group-by-topic.js'

/** One destination: a codec and level, and the topic it writes. */
export interface CopyTarget {
  readonly spec: CodecSpec
  readonly topic: string
}

/** Source records copied between two turns of the event loop (and heartbeat checks) within one fetch. */
const YIELD_EVERY_RECORDS = 256

/**
 * What becomes of a record a destination refuses as it is (over that topic's max.message.bytes, or invalid
 * there): stop the copy (Kafka Connect's errors.tolerance=none), count and skip it, or write it to a dead-letter
 * topic. Either of the last two lets source offsets move past it, so a restart does not meet it again.
 */
export const REFUSED_POLICIES = ['fail', 'skip', 'dead-letter'] as const
export type RefusedPolicy = (typeof REFUSED_POLICIES)[number]

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
  /** Consumer group session: how long a dead copier's partitions wait before moving (default 10 s). */
  readonly sessionTimeoutMs?: number
  /** Default 'fail'. 'skip' and 'dead-letter' need at-least-once: a refusal aborts the whole transaction. */
  readonly onRefused?: RefusedPolicy
  /** Where refused records go with 'dead-letter', unchanged, with the error and their origin in headers. */
  readonly deadLetterTopic?: string
}

export interface CopierStats {
  sourceRecords: number
  sourceBytes: number
  commits: number
  aborts: number
  /** Copies a destination refused (one per record and destination), skipped or sent to the dead-letter topic. */
  refused: number
  firstTimestamp: number
  lastTimestamp: number
}

export interface CopierDeps {
  readonly kafka: Kafka
  readonly admin: Admin
  /** One producer for every target (per-topic codecs), transactional when exactly-once. */
  readonly producer: Producer
  readonly log: Logger
  readonly metrics?: CopierMetrics
  readonly onProgress?: (stats: Readonly<CopierStats>) => void
}

/**
 * Producer defaults the copier differs in. It compresses on the event loop: with one source fanned out to six
 * targets x 3 partitions, the compression thread's buffers crossing threads (each thread has its own malloc
 * arena) cost 60-100 MB of peak RSS in the bench, more than the ~10% of speed it gained while the broker on
 * the same two cores was the limit. -X squeeze.compression.threads=N turns threads back on.
 */
export const COPIER_PRODUCER_DEFAULTS = { compressionThreads: 0 } as const

export function defaultDestination(source: string, spec: CodecSpec): string {
  return `${source}.${formatCodecSpec(spec).replace(':', '-')}`
}

/**
 * Mirrors a source topic into one topic per codec/level: same partition, key, value, headers and timestamp.
 * Source offsets are committed only after every target acknowledged the records before them (at-least-once),
 * or inside the same Kafka transaction as the copies (exactly-once). A slow target slows the source:
 * the producer's send() waits while its buffer.memory is full, and the consumer's batch loop waits on it.
 */
export class Copier {
  private consumer: Consumer | null = null
  private readonly stats: CopierStats = { sourceRecords: 0, sourceBytes: 0, commits: 0, aborts: 0, refused: 0, firstTimestamp: Number.POSITIVE_INFINITY, lastTimestamp: 0 }
  /** Next offset to copy per source partition (what a commit would record). */
  private readonly processed = new Map<number, number>()
  private readonly committed = new Map<number, number>()
  private endOffsets = new Map<number, number>()
  private lastCommitAt = Date.now()
  private rebalanced = false
  private done = false
  private finished: (() => void) | null = null
  private failure: unknown = null
  private readonly acked: AckedBatch[] = []
  private committing: Promise<void> = Promise.resolve()
  private copying: Promise<void> = Promise.resolve()
  /** At-least-once, per destination and partition: the source offset of each copy sent since the last commit. */
  private readonly sent = new PartitionTable(() => new SentOffsets())
  /** Delivery failures since the last commit, sorted out there. */
  private readonly failures: DeliveryFailure[] = []
  /** Copies refused since the last commit: by send() at once, or by a destination (found at commit). */
  private readonly refused: PoisonRecord[] = []
  /** The failure the copy stopped at, at-least-once: every later commit fails with it. */
  private unsettled: unknown = null

  constructor(private readonly config: CopierConfig, private readonly deps: CopierDeps) {
    if (config.exactlyOnce && (config.onRefused ?? 'fail') !== 'fail') {
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `refused records can be skipped or dead-lettered in at-least-once mode only (a refusal aborts the whole transaction); drop --exactly-once or --on-refused ${config.onRefused}`)
    }
    if (config.onRefused === 'dead-letter' && config.deadLetterTopic === undefined) {
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--on-refused dead-letter needs --dead-letter-topic')
    }
    deps.producer.onBatchAcked((batch) => this.acked.push(batch))
    // In a transaction any failure fails the commit (the producer aborts it), so there is nothing to sort out.
    if (!config.exactlyOnce) deps.producer.onDeliveryFailure((failure) => this.failures.push(failure))
  }

  snapshot(): Readonly<CopierStats> {
    return { ...this.stats }
  }

  /** Per source partition, the next offset not copied: the end of the source range the copy read. */
  copiedUpTo(): ReadonlyMap<number, number> {
    return new Map(this.processed)
  }

  /** Every batch a destination acknowledged, for the recompression and stored-bytes checks. */
  ackedBatches(): readonly AckedBatch[] {
    return this.acked
  }

  /** Copies until the budget or the end is reached, or `signal` aborts; commits what was copied, then resolves. */
  async run(signal?: AbortSignal): Promise<void> {
    const { sourceTopic, groupId } = this.config
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
    this.endOffsets = new Map(offsets.map((o) => [o.partition, Number(o.high)]))
    // Where a previous run (or a crashed one) left off: the group's committed offsets, else each partition's start.
    // A fresh cluster's group coordinator answers "loading" for a few seconds; kafkajs marks that retriable.
    const [groupOffsets] = await retry(() => this.deps.admin.fetchOffsets({ groupId, topics: [sourceTopic] }), { retries: 10, initialDelayMs: 200, maxDelayMs: 2000, shouldRetry: isTransient })
    for (const { partition, offset } of groupOffsets?.partitions ?? []) {
      const low = Number(offsets.find((o) => o.partition === partition)?.low ?? 0)
      this.committed.set(partition, Number(offset) >= 0 ? Number(offset) : low)
    }
    if (this.config.exactlyOnce) this.deps.producer.beginTransaction()

    // A 10 s session (Kafka's default minimum is 6 s) lets a restarted copier take over a dead one's partitions quickly.
    const sessionTimeout = this.config.sessionTimeoutMs ?? 10_000
    // maxWaitTimeInMs: kafkajs's default long poll (5 s) is also how long consumer.stop() waits for the last
    // fetch, which added ~4 s to every --until-end copy once the source was copied. 256 KiB per partition:
    // kafkajs holds a fetch's records decompressed, and 1 MiB (10 MB once decompressed per partition) put the
    // copier's peak RSS at 333-344 MB in the bench against 278 MB, at the same speed. A larger batch still
    // comes whole (Kafka returns at least one).
    const consumer = this.deps.kafka.consumer({
      groupId, readUncommitted: false, allowAutoTopicCreation: false, maxBytesPerPartition: 256 * 1024, maxWaitTimeInMs: 500,
      sessionTimeout, heartbeatInterval: Math.max(100, Math.floor(sessionTimeout / 10))
    })
    this.consumer = consumer
    consumer.on(consumer.events.REBALANCING, () => {
      this.rebalanced = true
    })
    const stopped = new Promise<void>((resolve) => {
      this.finished = resolve
    })
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      this.failure ??= payload.error
      this.finished?.()
    })
    signal?.addEventListener('abort', () => this.finished?.(), { once: true })
    // An abort while the offsets above were being fetched fired before the listener existed; copyBatch would then
    // skip every batch and the copy would never catch up.
    if (signal?.aborted === true) this.finished?.()

    await consumer.connect()
    await consumer.subscribe({ topics: [sourceTopic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => {
        const copying = this.copyBatch(payload, signal)
        this.copying = copying.catch(() => undefined)
        return copying
      }
    })
    const ticker = setInterval(() => {
      if (this.isCaughtUp()) this.finish()
    }, 200)
    try {
      await stopped
    } finally {
      clearInterval(ticker)
    }
    // The batch being copied ends at its next record boundary: every target gets each record, or none does.
    await this.copying
    // Commit before stopping: an at-least-once commit goes through the running consumer.
    if (this.failure === null) await this.commit()
    else if (this.config.exactlyOnce) await this.deps.producer.abortTransaction().catch(() => undefined)
    await consumer.stop()
    await consumer.disconnect()
    if (this.failure !== null) {
      throw this.failure instanceof SqueezeError ? this.failure : new SqueezeError(ErrorCodes.PRODUCE_FAILED, `copy failed: ${errorMessage(this.failure)}`, { cause: this.failure })
    }
  }

  private finish(): void {
    this.done = true
    this.finished?.()
  }

  private isCaughtUp(): boolean {
    if (this.config.maxRecords !== undefined && this.stats.sourceRecords >= this.config.maxRecords) return true
    if (this.config.maxBytes !== undefined && this.stats.sourceBytes >= this.config.maxBytes) return true
    if (!this.config.stopAtEnd) return false
    for (const [partition, end] of this.endOffsets) {
      if ((this.processed.get(partition) ?? this.committed.get(partition) ?? 0) < end) return false
    }
    return true
  }

  private async copyBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload, signal?: AbortSignal): Promise<void> {
    const { partition } = batch
    if (this.rebalanced) await this.recoverFromRebalance()
    let sinceYield = 0
    for (const message of batch.messages) {
      if (this.done || signal?.aborted === true || !isRunning() || isStale()) return
      const offset = Number(message.offset)
      if (offset < (this.processed.get(partition) ?? -1)) continue
      const headers = toHeaders(message.headers)
      const timestamp = Number(message.timestamp)
      for (const target of this.config.targets) {
        try {
          await this.deps.producer.send({ topic: target.topic, partition, key: message.key, value: message.value, headers, timestamp })
        } catch (err) {
          // Over max.request.size: the producer refuses it before any destination sees it. In a transaction
          // nothing can be left out, so it stops the copy there as any refusal does.
          if (!isRecordRefusal(err) || this.config.exactlyOnce) throw err
          this.refused.push({ topic: this.config.sourceTopic, partition, record: { offset, timestamp, key: message.key, value: message.value, headers }, code: err.code, reason: err.message, destination: target.topic })
          continue
        }
        if (!this.config.exactlyOnce) this.sent.get(target.topic, partition).push(offset)
      }
      this.processed.set(partition, offset + 1)
      resolveOffset(message.offset)
      this.stats.sourceRecords++
      this.deps.metrics?.sourceRecords(this.config.sourceTopic, 1)
      this.stats.sourceBytes += (message.key?.length ?? 0) + (message.value?.length ?? 0) + headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0)
      this.stats.firstTimestamp = Math.min(this.stats.firstTimestamp, timestamp)
      this.stats.lastTimestamp = Math.max(this.stats.lastTimestamp, timestamp)
      if (this.isCaughtUp()) {
        this.finish()
        return
      }
      if (++sinceYield === YIELD_EVERY_RECORDS) {
        sinceYield = 0
        // Sends into open batches resolve at once, so without this a fetch of thousands of records would hold the
        // event loop from start to end: /metrics unanswered, and no heartbeat within a short session timeout.
        await yieldToEventLoop()
        await heartbeat()
      }
    }
    this.deps.metrics?.lag(this.config.sourceTopic, partition, Math.max(0, Number(batch.highWatermark) - (this.processed.get(partition) ?? 0)))
    await heartbeat()
    if (Date.now() - this.lastCommitAt >= this.config.commitIntervalMs) await this.commit()
    this.deps.onProgress?.(this.stats)
  }

  /**
   * Exactly-once across a rebalance: the open transaction may hold copies of partitions that now belong to
   * another member, so it is aborted and every partition goes back to its last committed offset.
   */
  private async recoverFromRebalance(): Promise<void> {
    this.rebalanced = false
    if (!this.config.exactlyOnce) return
    this.deps.log.warn({ processed: Object.fromEntries(this.processed) }, 'group rebalanced: aborting the open transaction and rewinding to committed offsets')
    await this.deps.producer.abortTransaction()
    this.stats.aborts++
    for (const [partition] of this.processed) {
      const offset = this.committed.get(partition)
      if (offset === undefined) this.processed.delete(partition)
      else this.processed.set(partition, offset)
      this.consumer?.seek({ topic: this.config.sourceTopic, partition, offset: String(offset ?? 0) })
    }
    this.deps.producer.beginTransaction()
  }

  /** Commits the source offsets of everything every target has acknowledged (or, exactly-once, the transaction). */
  private commit(): Promise<void> {
    // The batch loop and the final stop may both want to commit; commits run one after the other.
    const next = this.committing.then(() => this.commitNow())
    this.committing = next.catch(() => undefined)
    return next
  }

  private async commitNow(): Promise<void> {
    this.deps.log.debug({ processed: Object.fromEntries(this.processed), done: this.done }, 'committing')
    const offsets = [...this.processed].filter(([partition, offset]) => this.committed.get(partition) !== offset)
    const topicOffsets = offsets.map(([partition, offset]) => ({ topic: this.config.sourceTopic, partition, offset }))
    if (this.config.exactlyOnce) {
      if (topicOffsets.length > 0) await this.deps.producer.sendOffsets(this.config.groupId, topicOffsets)
      await this.deps.producer.commitTransaction()
      if (!this.done) this.deps.producer.beginTransaction()
    } else {
      await this.deps.producer.flush()
      await this.settleFailures()
      if (topicOffsets.length > 0) await this.consumer?.commitOffsets(topicOffsets.map((o) => ({ ...o, offset: String(o.offset) })))
    }
    for (const [partition, offset] of offsets) this.committed.set(partition, offset)
    this.lastCommitAt = Date.now()
    this.stats.commits++
  }


  /**
   * After a flush, every copy sent is acknowledged or failed. A failure to deliver stops the copy before its
   * offsets are committed (the producer retried what can be retried); a refused record is handled as
   * `onRefused` says, so the commit can go past it.
   */
  private async settleFailures(): Promise<void> {
    // Once the copy cannot go past a failure, no later commit may go past it either (kafkajs can run the batch
    // loop again after the error).
    if (this.unsettled !== null) throw this.unsettled
    try {
      await this.sortOutFailures()
    } catch (err) {
      this.unsettled = err
      throw err
    }
  }

  private async sortOutFailures(): Promise<void> {
    const failures = this.failures.splice(0)
    const fatal = failures.find((f) => !isRecordRefusal(f.error))
    if (fatal !== undefined) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `destination ${fatal.topic} failed to take ${fatal.records} records (${fatal.error.message}); source offsets are not committed past them`, { cause: fatal.error })
    }
    for (const failure of failures) {
      const sent = this.sent.get(failure.topic, failure.partition)
      failure.sent.forEach((record, i) => {
        const offset = sent.offsetOf(failure.firstRecordIndex + i)
        if (offset === undefined) throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `destination ${failure.topic} refused a record the copier has no source offset for (${failure.error.message})`, { cause: failure.error })
        this.refused.push({ topic: this.config.sourceTopic, partition: failure.partition, record: { ...record, offset }, code: failure.error.code, reason: failure.error.message, destination: failure.topic })
      })
    }
    for (const offsets of this.sent.values()) offsets.forget()
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
    const lost = this.failures.splice(0)[0]
    if (lost !== undefined) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `cannot write refused records to the dead-letter topic ${deadLetterTopic}: ${lost.error.message}`, { cause: lost.error })
    }
  }
}

/** kafkajs hands headers as an object (repeated keys as arrays); squeeze sends them as an ordered list. */
function toHeaders(headers: IHeaders | undefined): RecordHeader[] {
  if (headers === undefined) return []
  const list: RecordHeader[] = []
  for (const [key, value] of Object.entries(headers)) {
    const values = Array.isArray(value) ? value : [value]
    for (const v of values) list.push({ key, value: v === undefined || v === null ? null : Buffer.isBuffer(v) ? v : Buffer.from(v) })
  }
  return list
}
