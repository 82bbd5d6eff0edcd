// The sender: drains ready batches to partition leaders within the in-flight limits, and settles each batch
// from the broker's answer: acknowledged, retried after a backoff, or failed (counted and reported).
import { createCodec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError, errorCode, errorMessage, type ErrorCode } from '../errors.js'
import { KafkaErrorCode, describeKafkaError, isRetriableKafkaError } from '../kafka/error-codes.js'
import { protocolError, type KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { produceRequest, RequestBufferPool, type PartitionBatch } from '../kafka/produce-request.js'
import type { Logger } from '../log/logger.js'
import type { ProducerMetrics } from '../metrics/producer-metrics.js'
import { BATCH } from '../protocol/batch-layout.js'
import { buildBatch } from '../protocol/record-batch-builder.js'
import { readBatch } from '../protocol/record-batch-reader.js'
import type { IncomingRecord } from '../protocol/record.js'
import { backoffDelay } from '../retry.js'
import type { RecordAccumulator } from './accumulator.js'
import { REQUEST_TIMEOUT_MARGIN_MS, type ProducerConfig, type TopicCodecs } from './config.js'
import type { Idempotence } from './idempotence.js'
import {
  isReady,
  newPendingBatch,
  removeBatch,
  type PartitionQueue,
  type PendingBatch,
  type ReadyBatch
} from './partition-queue.js'
import type { Transactions } from './transactions.js'

export interface DeliveryFailure {
  readonly topic: string
  readonly partition: number
  readonly records: number
  /** Where the failed records sit among those send() accepted for this topic-partition, counting from 0. */
  readonly firstRecordIndex: number
  /** The failed records as sent (empty when the batch never got compressed). */
  readonly sent: readonly IncomingRecord[]
  readonly error: SqueezeError
}

/** Broker answers that refuse the records themselves, as squeeze codes: resending the same records cannot help. */
/** Produce request buffers kept for reuse: as many as requests are usually in flight at once, and one more. */
const REQUEST_BUFFERS = 4

const REFUSALS: ReadonlyMap<number, ErrorCode> = new Map([
  [KafkaErrorCode.MESSAGE_TOO_LARGE, ErrorCodes.RECORD_TOO_LARGE],
  [KafkaErrorCode.INVALID_RECORD, ErrorCodes.RECORD_INVALID]
])
const REFUSAL_CODES: ReadonlySet<string> = new Set(REFUSALS.values())

/** Whether an error (a delivery failure's, or send()'s) is a refusal of the record itself rather than a failure to deliver. */
export function isRecordRefusal(err: unknown): err is SqueezeError {
  return err instanceof SqueezeError && REFUSAL_CODES.has(err.code)
}

/** A batch the broker acknowledged, as sent: enough to check later that the broker stored it unchanged. */
export interface AckedBatch {
  readonly topic: string
  readonly partition: number
  readonly baseOffset: number
  readonly records: number
  readonly crc: number
  readonly sizeBytes: number
  readonly uncompressedBytes: number
  readonly compressCpuSeconds: number
  /** The level it was compressed at (null for codecs without levels): an adaptive topic's vary. */
  readonly level: number | null
}

export interface DeliveryStats {
  recordsAcked: number
  recordsFailed: number
  batchesAcked: number
  uncompressedBytes: number
  compressedBytes: number
  compressCpuSeconds: number
  retries: number
}

export interface SenderDeps {
  readonly cluster: KafkajsCluster
  readonly log: Logger
  readonly metrics?: ProducerMetrics
  readonly random?: () => number
}

interface InFlightEntry {
  readonly queue: PartitionQueue
  readonly batch: ReadyBatch
}

type SenderConfig = Pick<
  ProducerConfig,
  'acks' | 'deliveryTimeoutMs' | 'requestTimeoutMs' | 'maxRequestSizeBytes' | 'retryBackoffMs' | 'retryBackoffMaxMs'
>

/**
 * One produce request per leader and round: round k holds each partition's k-th batch of this pass, and goes on
 * the wire before round k+1 on the one produce connection per broker, so the broker sees each partition's
 * batches in order. Per-partition order across retries is the idempotence module's rules (inFlightLimit, mayResume).
 */
export class Sender {
  readonly stats: DeliveryStats = {
    recordsAcked: 0,
    recordsFailed: 0,
    batchesAcked: 0,
    uncompressedBytes: 0,
    compressedBytes: 0,
    compressCpuSeconds: 0,
    retries: 0
  }
  private readonly failureHandlers: Array<(failure: DeliveryFailure) => void> = []
  private readonly ackHandlers: Array<(batch: AckedBatch) => void> = []
  private idleWaiters: Array<() => void> = []
  /** flushAccepted() callers: each waits until every queue's batches before its mark are gone. */
  private settledWaiters: Array<{ marks: ReadonlyArray<readonly [PartitionQueue, number]>; wake: () => void }> = []
  private drainScheduled = false
  private retryTimer: NodeJS.Timeout | null = null
  private expiryTimer: NodeJS.Timeout | null = null
  private inFlightRequests = 0
  private readonly requestBuffers = new RequestBufferPool(REQUEST_BUFFERS)
  private readonly random: () => number
  private readonly backoffOptions: { initialDelayMs: number; maxDelayMs: number }

  constructor(
    private readonly config: SenderConfig,
    private readonly deps: SenderDeps,
    private readonly accumulator: RecordAccumulator,
    private readonly codecs: TopicCodecs,
    private readonly idempotence: Idempotence,
    private readonly transactions: Transactions | null
  ) {
    this.random = deps.random ?? Math.random
    this.backoffOptions = { initialDelayMs: config.retryBackoffMs, maxDelayMs: config.retryBackoffMaxMs }
  }

  onDeliveryFailure(handler: (failure: DeliveryFailure) => void): void {
    this.failureHandlers.push(handler)
  }

  onBatchAcked(handler: (batch: AckedBatch) => void): void {
    this.ackHandlers.push(handler)
  }

  scheduleDrain(): void {
    if (this.drainScheduled) return
    this.drainScheduled = true
    setImmediate(() => {
      this.drainScheduled = false
      this.drain().catch((err: unknown) => this.deps.log.error({ err }, 'producer drain failed'))
    })
  }

  /** Drains again after `delayMs` (a retry's backoff), replacing any earlier such wake-up. */
  scheduleRetry(delayMs: number): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null
        this.scheduleDrain()
      },
      Math.max(1, delayMs)
    )
  }

  /** Resolves once every accepted record is acknowledged or failed, and no request is on the wire. */
  async whenIdle(): Promise<void> {
    if (this.isIdle()) return
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Resolves once no queue holds a batch with records before its mark (a count of accepted records): each was
   * acknowledged or failed. A split batch's halves keep their place by index, so they are waited for too.
   */
  async whenSettled(marks: ReadonlyArray<readonly [PartitionQueue, number]>): Promise<void> {
    if (settled(marks)) return
    await new Promise<void>((wake) => this.settledWaiters.push({ marks, wake }))
  }

  stop(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    if (this.expiryTimer !== null) clearTimeout(this.expiryTimer)
  }

  failBatch(queue: PartitionQueue, batch: PendingBatch, error: SqueezeError): void {
    if (!removeBatch(queue, batch)) return
    this.accumulator.release(batch.reserved)
    const records = batch.records
    this.stats.recordsFailed += records
    this.deps.metrics?.recordsFailed(this.codecs.labels(queue.topic, batch.spec), records, error.code)
    this.deps.log.error({ topic: queue.topic, partition: queue.partition, records, code: error.code }, error.message)
    // A copy: a batch without compression is a view of a builder buffer that goes back to the pool.
    const sent =
      this.failureHandlers.length === 0 || batch.sealed === null
        ? []
        : readBatch(Buffer.from(batch.sealed.bytes), { verifyCrc: false }).records
    // A failed batch that was given sequence numbers leaves a hole in them; a new epoch starts them afresh.
    // Inside a transaction the whole transaction fails instead: commitTransaction() aborts it and throws.
    if (this.transactions !== null) this.transactions.batchFailed(error)
    else this.idempotence.failed(batch)
    for (const handler of this.failureHandlers)
      handler({
        topic: queue.topic,
        partition: queue.partition,
        records,
        firstRecordIndex: batch.firstIndex,
        sent,
        error
      })
    this.checkIdle()
  }

  private async drain(): Promise<void> {
    this.expire(Date.now())
    if (this.idempotence.stale) {
      // InitProducerId may wait on a broker that does not answer: the batches' timeouts run meanwhile.
      this.wakeAtNextExpiry()
      if (!(await this.idempotence.renew(this.inFlightRequests))) return
    }
    const now = Date.now()
    const rounds: Array<Map<number, InFlightEntry[]>> = []
    let earliestRetry = Number.POSITIVE_INFINITY
    for (const queue of this.accumulator.queues) {
      if (!this.idempotence.mayResume(queue)) continue
      const limit = this.idempotence.inFlightLimit(queue)
      let round = 0
      for (const batch of queue.queue) {
        if (queue.inFlight + round >= limit) break
        if (batch.inFlight) continue
        if (!isReady(batch)) break
        // A batch past its delivery timeout goes on the wire no more: it fails once it reaches the head of the
        // queue, so a flush ends within flushDeadlineMs.
        if (now - batch.closedAt > this.config.deliveryTimeoutMs) break
        if (batch.retryAt > now) {
          earliestRetry = Math.min(earliestRetry, batch.retryAt)
          break
        }
        const leader = this.leaderOf(queue)
        if (leader === undefined) {
          batch.retryAt = now + this.backoff(batch.attempts++)
          earliestRetry = Math.min(earliestRetry, batch.retryAt)
          this.refreshMetadata()
          break
        }
        this.idempotence.stamp(queue, batch)
        const byLeader = rounds[round] ?? new Map<number, InFlightEntry[]>()
        rounds[round] = byLeader
        const group = byLeader.get(leader)
        if (group === undefined) byLeader.set(leader, [{ queue, batch }])
        else group.push({ queue, batch })
        round++
      }
    }
    if (earliestRetry !== Number.POSITIVE_INFINITY) this.scheduleRetry(earliestRetry - now)
    for (const byLeader of rounds) {
      for (const [leader, entries] of byLeader) {
        for (const request of this.splitByRequestSize(entries)) this.send(leader, request)
      }
    }
  }

  /**
   * Fails every queue's leading batches that are off the wire and past delivery.timeout.ms. It runs before a new
   * producer id is sought, which needs a broker: with none answering, batches still fail on time, so a flush ends.
   */
  private expire(now: number): void {
    for (const queue of this.accumulator.queues) {
      // A partition with batches on the wire after a failure fails nothing until they are back (mayResume).
      if (queue.needsResend && queue.inFlight > 0) continue
      const { deliveryTimeoutMs } = this.config
      const expired = (batch: PendingBatch | undefined): batch is PendingBatch =>
        batch !== undefined && !batch.inFlight && isReady(batch) && now - batch.closedAt > deliveryTimeoutMs
      for (let head = queue.queue[0]; expired(head); head = queue.queue[0]) {
        const message =
          `batch of ${head.records} records for ${queue.topic}-${queue.partition} not acknowledged ` +
          `within delivery.timeout.ms ${deliveryTimeoutMs}`
        this.failBatch(queue, head, new SqueezeError(ErrorCodes.TIMEOUT, message))
      }
    }
  }

  /** While no producer id can be had, drains again when the next leading batch's delivery.timeout.ms runs out. */
  private wakeAtNextExpiry(): void {
    let next = Number.POSITIVE_INFINITY
    for (const queue of this.accumulator.queues) {
      const head = queue.queue[0]
      if (head !== undefined) next = Math.min(next, head.closedAt + this.config.deliveryTimeoutMs + 1)
    }
    if (next === Number.POSITIVE_INFINITY) return
    if (this.expiryTimer !== null) clearTimeout(this.expiryTimer)
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = null
        this.scheduleDrain()
      },
      Math.max(1, next - Date.now())
    )
  }

  private send(leader: number, request: InFlightEntry[]): void {
    for (const { queue, batch } of request) {
      queue.inFlight++
      batch.inFlight = true
    }
    this.inFlightRequests++
    void this.sendRequest(leader, request).finally(() => {
      this.inFlightRequests--
      for (const { queue, batch } of request) {
        queue.inFlight--
        batch.inFlight = false
      }
      this.scheduleDrain()
      this.checkIdle()
    })
  }

  private splitByRequestSize(entries: InFlightEntry[]): Array<InFlightEntry[]> {
    const requests: Array<InFlightEntry[]> = []
    let current: InFlightEntry[] = []
    let bytes = 0
    for (const entry of entries) {
      const size = entry.batch.sealed.bytes.length
      if (current.length > 0 && bytes + size > this.config.maxRequestSizeBytes) {
        requests.push(current)
        current = []
        bytes = 0
      }
      current.push(entry)
      bytes += size
    }
    if (current.length > 0) requests.push(current)
    return requests
  }

  private leaderOf(queue: PartitionQueue): number | undefined {
    try {
      const metadata = this.deps.cluster
        .findTopicPartitionMetadata(queue.topic)
        .find((p) => p.partitionId === queue.partition)
      return metadata === undefined || metadata.leader < 0 ? undefined : metadata.leader
    } catch {
      return undefined
    }
  }

  private async sendRequest(leader: number, entries: InFlightEntry[]): Promise<void> {
    const batches: PartitionBatch[] = entries.map(({ queue, batch }) => ({
      topic: queue.topic,
      partition: queue.partition,
      batch: batch.sealed.bytes
    }))
    let results
    try {
      await this.transactions?.addPartitions(entries)
      const broker = await this.deps.cluster.findBroker({ nodeId: leader })
      let body: Buffer | undefined
      const allocate = (size: number): Buffer => (body = this.requestBuffers.take(size))
      const { request, response } = produceRequest({
        acks: this.config.acks,
        timeoutMs: this.config.requestTimeoutMs,
        transactionalId: this.transactions?.transactionalId ?? null,
        batches,
        allocate
      })
      const timeoutMs = this.config.requestTimeoutMs + REQUEST_TIMEOUT_MARGIN_MS
      results = await withinMs(broker.connectionPool.send({ request, response, requestTimeout: timeoutMs }), timeoutMs)
      // Answered, so written: with acks 0 there is no answer to tell that, and the buffer is left to GC.
      if (body !== undefined && this.config.acks !== 0) this.requestBuffers.give(body)
    } catch (err) {
      // Connection refused, reset or timed out: the batches may or may not have landed. Retrying is safe
      // with idempotence (the broker drops duplicate sequences); without it, at-least-once is what Kafka offers too.
      this.deps.log.warn(
        { err: errorMessage(err), leader, batches: entries.length },
        'produce request failed; will retry'
      )
      for (const entry of entries) this.retryLater(entry.queue, entry.batch, errorCode(err))
      this.refreshMetadata()
      return
    }
    if (this.config.acks === 0 || results === undefined) {
      for (const { queue, batch } of entries) this.acknowledge(queue, batch, -1)
      return
    }
    for (const { queue, batch } of entries) {
      const result = results.find((r) => r.topic === queue.topic && r.partition === queue.partition)
      const code = result?.errorCode ?? -1
      if (code === KafkaErrorCode.NONE || code === KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER /* already written */) {
        this.acknowledge(queue, batch, result?.baseOffset ?? -1)
      } else if (this.idempotence.sequenceRefused(code, queue, batch)) {
        this.retryLater(queue, batch, String(code))
      } else if (isRetriableKafkaError(code)) {
        this.retryLater(queue, batch, String(code))
        this.refreshMetadata()
      } else if (code === KafkaErrorCode.MESSAGE_TOO_LARGE && batch.sealed.recordCount > 1) {
        this.split(queue, batch, String(code))
      } else {
        const squeezeCode = REFUSALS.get(code) ?? ErrorCodes.PRODUCE_FAILED
        this.failBatch(
          queue,
          batch,
          new SqueezeError(
            squeezeCode,
            `broker rejected a batch of ${batch.sealed.recordCount} records for ${queue.topic}-${queue.partition}: ${describeKafkaError(code)}`,
            { cause: protocolError(code) }
          )
        )
      }
    }
  }

  /**
   * A batch over the topic's max.message.bytes goes again as two halves, in its place (Java's producer splits
   * too), until what the broker refuses is the one record that is too large, alone: the records around it get
   * through. The halves are compressed here, on this rare path.
   */
  private split(queue: PartitionQueue, batch: ReadyBatch, code: string): void {
    const records = readBatch(batch.sealed.bytes, { verifyCrc: false }).records
    const codec = createCodec(batch.spec)
    const half = Math.ceil(records.length / 2)
    const halves = [records.slice(0, half), records.slice(half)].map((part, i) => {
      const sealed = buildBatch(part, codec)
      const pending = newPendingBatch(
        part.length,
        batch.firstIndex + i * half,
        sealed.bytes.length,
        batch.closedAt,
        batch.spec
      )
      pending.sealed = sealed
      return pending
    })
    this.idempotence.replaced(queue, batch)
    queue.queue.splice(queue.queue.indexOf(batch), 1, ...halves)
    this.accumulator.reserve(halves.reduce((sum, h) => sum + h.reserved, 0))
    this.accumulator.release(batch.reserved)
    queue.needsResend = true
    this.stats.retries++
    this.deps.metrics?.retried(this.codecs.labels(queue.topic, batch.spec), code)
    this.deps.log.warn(
      { topic: queue.topic, partition: queue.partition, records: records.length },
      "batch over the topic's max.message.bytes; resending it in halves"
    )
  }

  private acknowledge(queue: PartitionQueue, batch: ReadyBatch, baseOffset: number): void {
    removeBatch(queue, batch)
    this.idempotence.acknowledged(queue, batch)
    this.accumulator.release(batch.reserved)
    const { sealed } = batch
    this.stats.recordsAcked += sealed.recordCount
    this.stats.batchesAcked++
    this.stats.uncompressedBytes += sealed.uncompressedBytes
    this.stats.compressedBytes += sealed.bytes.length
    this.stats.compressCpuSeconds += sealed.compressCpuSeconds
    this.deps.metrics?.batchSent(this.codecs.labels(queue.topic, batch.spec), {
      records: sealed.recordCount,
      uncompressedBytes: sealed.uncompressedBytes,
      compressedBytes: sealed.bytes.length,
      compressCpuSeconds: sealed.compressCpuSeconds,
      latencySeconds: (Date.now() - batch.closedAt) / 1000
    })
    if (this.ackHandlers.length > 0) {
      const acked: AckedBatch = {
        topic: queue.topic,
        partition: queue.partition,
        baseOffset,
        records: sealed.recordCount,
        crc: sealed.bytes.readUInt32BE(BATCH.CRC),
        sizeBytes: sealed.bytes.length,
        uncompressedBytes: sealed.uncompressedBytes,
        compressCpuSeconds: sealed.compressCpuSeconds,
        level: batch.spec.level
      }
      for (const handler of this.ackHandlers) handler(acked)
    }
  }

  private retryLater(queue: PartitionQueue, batch: PendingBatch, code: string): void {
    queue.needsResend = true
    batch.retryAt = Date.now() + this.backoff(batch.attempts++)
    this.stats.retries++
    this.deps.metrics?.retried(this.codecs.labels(queue.topic, batch.spec), code)
  }

  private backoff(attempt: number): number {
    return backoffDelay(attempt, this.backoffOptions, this.random)
  }

  private refreshMetadata(): void {
    this.deps.cluster
      .refreshMetadata()
      .catch((err: unknown) => this.deps.log.debug({ err: errorMessage(err) }, 'metadata refresh failed'))
  }

  private isIdle(): boolean {
    return this.inFlightRequests === 0 && this.accumulator.isEmpty()
  }

  private checkIdle(): void {
    if (this.settledWaiters.length > 0) this.checkSettled()
    if (this.idleWaiters.length === 0 || !this.isIdle()) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const wake of waiters) wake()
  }

  /**
   * Wakes the waiters whose marks are settled, oldest first. Marks only grow (accepted counts, over a list of queues
   * that only grows), so the first waiter not settled holds back every later one: one check per acknowledgement.
   */
  private checkSettled(): void {
    let woken = 0
    for (const waiter of this.settledWaiters) {
      if (!settled(waiter.marks)) break
      woken++
    }
    if (woken === 0) return
    const waking = this.settledWaiters.splice(0, woken)
    for (const waiter of waking) waiter.wake()
  }
}

function settled(marks: ReadonlyArray<readonly [PartitionQueue, number]>): boolean {
  for (const [queue, mark] of marks) {
    const head = queue.queue[0]
    if (head !== undefined && head.firstIndex < mark) return false
    // The open batch is not queued yet: its records before the mark wait for it to close, be sent and answered.
    const open = queue.open
    if (open !== null && open.recordCount > 0 && queue.accepted - open.recordCount < mark) return false
  }
  return true
}

/**
 * The request's answer, or a retriable timeout once `ms` pass. kafkajs waits for the longer of a request's own
 * timeout and its connection's, so without this a produce request's bound would be the connection's setting, not
 * request.timeout.ms. An answer that comes later is dropped; the batch is resent (the broker drops a duplicate
 * sequence under idempotence), and its request buffer is not reused, since kafkajs may still hold it.
 */
function withinMs<T>(answer: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    const error = (): SqueezeError =>
      new SqueezeError(ErrorCodes.TIMEOUT, `produce request not answered within ${ms} ms`, { retriable: true })
    timer = setTimeout(() => reject(error()), ms)
  })
  answer.catch(() => undefined)
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer))
}
