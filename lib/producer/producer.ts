import { createCodec, formatCodecSpec, resolveCodecSpec, type CodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError, errorCode, errorMessage, isTransient } from '../errors.js'
import { nestByTopic } from '../kafka/group-by-topic.js'
import { produceRequest, describeProduceError, isRetriableProduceError, type PartitionBatch } from '../kafka/produce-request.js'
import { COORDINATOR_TYPES, type KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import { retry } from '../retry.js'
import type { BatchLabels, ProducerMetrics } from '../metrics/producer-metrics.js'
import { BATCH } from '../protocol/batch-layout.js'
import { buildBatch, RecordBatchBuilder, stampProducerState, type BatchProducerState, type SealedBatch } from '../protocol/record-batch-builder.js'
import { readBatch } from '../protocol/record-batch-reader.js'
import type { IncomingRecord, OutgoingRecord } from '../protocol/record.js'
import { createBatchSealer, type BatchSealer } from './batch-sealer.js'
import { partitionForKey, StickyPartitioner } from './partitioner.js'

/** Producer settings, under Kafka's own names and meanings (see README for where squeeze differs). */
export interface ProducerConfig {
  /** linger.ms: how long a batch waits for more records before it is sent. */
  readonly lingerMs: number
  /** batch.size: the most uncompressed bytes in one batch (squeeze applies it before compression). */
  readonly batchSizeBytes: number
  /** buffer.memory: bytes held by open and unacknowledged batches; send() waits above it. */
  readonly bufferMemoryBytes: number
  /** max.request.size: the largest record (and produce request) accepted. */
  readonly maxRequestSizeBytes: number
  readonly acks: -1 | 0 | 1
  /** enable.idempotence: producer id and sequence numbers, so retries never duplicate. */
  readonly idempotent: boolean
  readonly deliveryTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly retryBackoffMs: number
  readonly retryBackoffMaxMs: number
  readonly codec: CodecSpec
  /** Codec per destination topic, overriding `codec`: the copier writes every target through one producer. */
  readonly topicCodecs?: Readonly<Record<string, CodecSpec>>
  /**
   * max.in.flight.requests.per.connection: batches of one partition on the wire at once (1-5). Applies with
   * idempotence only, where the broker's sequence checks keep them in order; otherwise squeeze sends one at a time.
   */
  readonly maxInFlightPerPartition: number
  /** Compress batches on a worker thread, beside the event loop; false compresses inline. */
  readonly compressionThread: boolean
}

export const DEFAULT_PRODUCER_CONFIG: ProducerConfig = {
  lingerMs: 100,
  batchSizeBytes: 1024 * 1024,
  bufferMemoryBytes: 32 * 1024 * 1024,
  maxRequestSizeBytes: 1024 * 1024,
  acks: -1,
  idempotent: true,
  deliveryTimeoutMs: 120_000,
  requestTimeoutMs: 30_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  maxInFlightPerPartition: 5,
  compressionThread: true,
  codec: { codec: 'zstd', level: 3 }
}

export interface ProducerRecord extends OutgoingRecord {
  readonly topic: string
  readonly partition?: number
}

export interface ProducerStats {
  recordsAccepted: number
  recordsAcked: number
  recordsFailed: number
  batchesAcked: number
  uncompressedBytes: number
  compressedBytes: number
  compressCpuSeconds: number
  retries: number
}

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

/** Failure codes that mean the destination refuses these records as they are: resending them cannot help. */
const REFUSAL_CODES: ReadonlySet<string> = new Set([ErrorCodes.RECORD_TOO_LARGE, ErrorCodes.RECORD_INVALID])

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
}

export interface ProducerDeps {
  readonly cluster: KafkajsCluster
  readonly log: Logger
  readonly metrics?: ProducerMetrics
  readonly random?: () => number
  readonly transactionalId?: string
}

interface PendingBatch {
  readonly records: number
  /** The partition's count of accepted records before this batch's first one. */
  readonly firstIndex: number
  inFlight: boolean
  /** null while the batch is being compressed. */
  sealed: SealedBatch | null
  readonly closedAt: number
  reserved: number
  attempts: number
  retryAt: number
  stampedGeneration: number
}

interface ReadyBatch extends PendingBatch {
  sealed: SealedBatch
}

function isReady(batch: PendingBatch): batch is ReadyBatch {
  return batch.sealed !== null
}

interface InFlightEntry {
  readonly queue: PartitionQueue
  readonly batch: ReadyBatch
}

interface PartitionQueue {
  readonly topic: string
  readonly partition: number
  open: RecordBatchBuilder | null
  openedAt: number
  lingerTimer: NodeJS.Timeout | null
  readonly queue: PendingBatch[]
  /** Batches of this partition on the wire now. */
  inFlight: number
  /** A batch failed: send nothing until every in-flight batch is back, then resend from the head in order. */
  needsResend: boolean
  /** Records send() accepted for this partition so far. */
  accepted: number
  /** The broker acknowledged a batch of the current producer id here, so it checks the sequences that follow. */
  sequenceConfirmed: boolean
  nextSequence: number
}

const ACCEPTED: Promise<void> = Promise.resolve()

interface ProducerIdentity {
  producerId: bigint
  producerEpoch: number
}

/**
 * Batches records per partition, compresses each batch with its own codec instance and level, and sends
 * finished batches through kafkajs's connections. One batch per partition is in flight at a time, so
 * per-partition order holds across retries.
 */
export class Producer {
  private readonly config: ProducerConfig
  private readonly sealer: BatchSealer
  private readonly specsByTopic = new Map<string, CodecSpec>()
  private readonly allocateBatch = (size: number): Buffer => this.sealer.buffer(size)
  private readonly labelsByTopic = new Map<string, BatchLabels>()
  private readonly partitionCounts = new Map<string, number>()
  private readonly queues: PartitionQueue[] = []
  /** Per topic, indexed by partition: a string key per record cost more than the lookup it saved. */
  private readonly queuesByTopic = new Map<string, Array<PartitionQueue | undefined>>()
  private readonly sticky: StickyPartitioner
  private readonly stats: ProducerStats = {
    recordsAccepted: 0, recordsAcked: 0, recordsFailed: 0, batchesAcked: 0,
    uncompressedBytes: 0, compressedBytes: 0, compressCpuSeconds: 0, retries: 0
  }

  private reservedBytes = 0
  private memoryWaiters: Array<() => void> = []
  private idleWaiters: Array<() => void> = []
  private failureHandlers: Array<(failure: DeliveryFailure) => void> = []
  private ackHandlers: Array<(batch: AckedBatch) => void> = []
  private identity: ProducerIdentity = { producerId: -1n, producerEpoch: -1 }
  private generation = 0
  private identityStale = false
  private identityRefresh: Promise<void> | null = null
  private drainScheduled = false
  private retryTimer: NodeJS.Timeout | null = null
  private inFlightRequests = 0
  private closing: Promise<void> | null = null
  private started = false
  private inTransaction = false
  private transactionError: SqueezeError | null = null
  private offsetsGroupAdded = false
  private readonly partitionsInTransaction = new Set<string>()

  constructor(config: ProducerConfig, private readonly deps: ProducerDeps) {
    this.config = config
    // Bad codecs and levels fail here, at start-up, not at the first batch.
    for (const spec of [config.codec, ...Object.values(config.topicCodecs ?? {})]) resolveCodecSpec(spec.codec, spec.level)
    this.sealer = createBatchSealer(config.compressionThread, deps.log)
    this.sticky = new StickyPartitioner(deps.random)
  }

  get codecLabel(): string {
    return formatCodecSpec(this.config.codec)
  }

  /** Connects and, with idempotence, obtains a producer id. Fails with a clear error if no broker answers. */
  async start(): Promise<void> {
    try {
      await this.deps.cluster.connect()
      await this.deps.cluster.refreshMetadata()
    } catch (err) {
      throw new SqueezeError(ErrorCodes.BROKER_UNREACHABLE, `cannot reach any Kafka broker: ${errorMessage(err)}; check --brokers and that the cluster is up`, { cause: err, retriable: true })
    }
    if (this.config.idempotent || this.transactionalId !== undefined) await this.initProducerId()
    // Start the compression thread now, not under the first full batch (its start-up is ~50 ms of CPU).
    this.sealer.start()
    this.started = true
  }

  private get transactionalId(): string | undefined {
    return this.deps.transactionalId
  }

  /** Starts a transaction: records sent from now until commit or abort become visible together, or never. */
  beginTransaction(): void {
    if (this.transactionalId === undefined) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'beginTransaction needs a transactionalId')
    if (this.inTransaction) throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'a transaction is already open')
    this.inTransaction = true
    this.transactionError = null
    this.partitionsInTransaction.clear()
    this.offsetsGroupAdded = false
  }

  /** Adds consumer offsets to the open transaction, so they commit exactly when its records do. */
  async sendOffsets(groupId: string, offsets: ReadonlyArray<{ topic: string; partition: number; offset: number }>): Promise<void> {
    const transactionalId = this.requireTransaction()
    const ids = this.transactionIds()
    if (!this.offsetsGroupAdded) {
      // CONCURRENT_TRANSACTIONS (retriable) while the coordinator still writes the previous transaction's markers.
      await retry(async () => {
        const coordinator = await this.deps.cluster.findGroupCoordinator({ groupId: transactionalId, coordinatorType: COORDINATOR_TYPES.TRANSACTION })
        await coordinator.addOffsetsToTxn({ transactionalId, ...ids, groupId })
      }, { retries: 10, initialDelayMs: 50, maxDelayMs: 1000, shouldRetry: isTransient })
      this.offsetsGroupAdded = true
    }
    const topics = nestByTopic(offsets, (o) => ({ partition: o.partition, offset: String(o.offset) }))
    await retry(async () => {
      const groupCoordinator = await this.deps.cluster.findGroupCoordinator({ groupId, coordinatorType: COORDINATOR_TYPES.GROUP })
      await groupCoordinator.txnOffsetCommit({ transactionalId, groupId, ...ids, topics })
    }, { retries: 10, initialDelayMs: 100, maxDelayMs: 2000, shouldRetry: isTransient })
  }

  /** Sends everything, then commits. If any batch of the transaction failed, aborts it instead and throws. */
  async commitTransaction(): Promise<void> {
    const transactionalId = this.requireTransaction()
    await this.flush()
    if (this.transactionError !== null) {
      await this.endTransaction(transactionalId, false)
      throw this.transactionError
    }
    await this.endTransaction(transactionalId, true)
  }

  async abortTransaction(): Promise<void> {
    const transactionalId = this.requireTransaction()
    await this.flush()
    await this.endTransaction(transactionalId, false)
  }

  private async endTransaction(transactionalId: string, commit: boolean): Promise<void> {
    const ids = this.transactionIds()
    // A transaction that wrote nothing was never opened on the coordinator; EndTxn would be INVALID_TXN_STATE.
    if (this.partitionsInTransaction.size === 0 && !this.offsetsGroupAdded) {
      this.inTransaction = false
      return
    }
    try {
      await retry(async () => {
        const coordinator = await this.deps.cluster.findGroupCoordinator({ groupId: transactionalId, coordinatorType: COORDINATOR_TYPES.TRANSACTION })
        await coordinator.endTxn({ transactionalId, ...ids, transactionResult: commit })
      }, { retries: 10, initialDelayMs: 100, maxDelayMs: 2000, shouldRetry: isTransient })
    } finally {
      this.inTransaction = false
      this.partitionsInTransaction.clear()
    }
  }

  private requireTransaction(): string {
    if (this.transactionalId === undefined || !this.inTransaction) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'no open transaction: call beginTransaction() first')
    }
    return this.transactionalId
  }

  private transactionIds(): { producerId: string; producerEpoch: number } {
    return { producerId: String(this.identity.producerId), producerEpoch: this.identity.producerEpoch }
  }

  /** AddPartitionsToTxn for partitions this transaction has not written to yet; must precede their first batch. */
  private async addPartitionsToTransaction(entries: ReadonlyArray<{ queue: PartitionQueue }>): Promise<void> {
    const transactionalId = this.transactionalId
    if (transactionalId === undefined) return
    const fresh = entries.filter(({ queue }) => !this.partitionsInTransaction.has(`${queue.topic}\u0000${queue.partition}`))
    if (fresh.length === 0) return
    const topics = nestByTopic(fresh.map(({ queue }) => queue), (queue) => queue.partition)
    await retry(async () => {
      const coordinator = await this.deps.cluster.findGroupCoordinator({ groupId: transactionalId, coordinatorType: COORDINATOR_TYPES.TRANSACTION })
      await coordinator.addPartitionsToTxn({ transactionalId, ...this.transactionIds(), topics })
    }, { retries: 10, initialDelayMs: 50, maxDelayMs: 1000, shouldRetry: isTransient })
    for (const { queue } of fresh) this.partitionsInTransaction.add(`${queue.topic}\u0000${queue.partition}`)
  }

  onDeliveryFailure(handler: (failure: DeliveryFailure) => void): void {
    this.failureHandlers.push(handler)
  }

  onBatchAcked(handler: (batch: AckedBatch) => void): void {
    this.ackHandlers.push(handler)
  }

  snapshot(): Readonly<ProducerStats> {
    return { ...this.stats }
  }

  /** Bytes reserved right now by open and unacknowledged batches. */
  get bufferedBytes(): number {
    return this.reservedBytes
  }

  /**
   * Accepts one record. Resolves once it sits in a batch; waits while buffer.memory is full (backpressure).
   * Delivery outcome is reported through stats, metrics and onDeliveryFailure, and awaited by flush().
   * Not an async function: a record that fits is appended synchronously and gets one shared resolved promise,
   * because a promise chain per record was a fifth of the producer's CPU (allocation and GC) in the profile.
   */
  send(record: ProducerRecord): Promise<void> {
    let partition: number
    try {
      this.checkAccepting(record)
      const partitions = this.partitionCounts.get(record.topic)
      if (partitions === undefined) return this.sendAfterMetadata(record)
      partition = this.choosePartition(record, partitions)
    } catch (err) {
      return Promise.reject(err)
    }
    const queue = this.queueFor(record.topic, partition)
    const timestamp = record.timestamp ?? Date.now()
    if (this.appendNow(queue, record, timestamp)) return ACCEPTED
    return this.appendWhenMemoryFrees(queue, record, timestamp)
  }

  /**
   * Accepts records in order, waiting only where buffer.memory is full: no await per record, which an
   * intake loop of `await send()` pays even when every record fits. On an error the records before the
   * failing one are accepted, the rest are not.
   */
  async sendMany(records: readonly ProducerRecord[]): Promise<void> {
    for (const record of records) {
      const accepted = this.send(record)
      if (accepted !== ACCEPTED) await accepted
    }
  }

  private checkAccepting(record: ProducerRecord): void {
    if (this.closing !== null || !this.started) {
      throw new SqueezeError(ErrorCodes.PRODUCER_CLOSED, this.started ? 'producer is closing; no new records are accepted' : 'producer not started: call start() first')
    }
    let size = (record.key?.length ?? 0) + (record.value?.length ?? 0) + 64
    if (record.headers !== undefined) for (const h of record.headers) size += h.key.length + (h.value?.length ?? 0) + 10
    if (size > this.config.maxRequestSizeBytes) {
      throw new SqueezeError(ErrorCodes.RECORD_TOO_LARGE, `record of about ${size} bytes exceeds max.request.size ${this.config.maxRequestSizeBytes}; raise max.request.size (and the topic's max.message.bytes) or split the record`)
    }
    if (this.transactionalId !== undefined && !this.inTransaction) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'transactional producer: call beginTransaction() before send()')
    }
  }

  private async sendAfterMetadata(record: ProducerRecord): Promise<void> {
    const partition = this.choosePartition(record, await this.partitionCount(record.topic))
    const queue = this.queueFor(record.topic, partition)
    await this.appendWhenMemoryFrees(queue, record, record.timestamp ?? Date.now())
  }

  private choosePartition(record: ProducerRecord, partitions: number): number {
    if (record.partition !== undefined) {
      if (!Number.isInteger(record.partition) || record.partition < 0 || record.partition >= partitions) {
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `partition ${record.partition} does not exist in ${record.topic} (${partitions} partitions)`)
      }
      return record.partition
    }
    if (record.key !== null) return partitionForKey(record.key, partitions)
    return this.sticky.partition(record.topic, partitions)
  }

  /** Appends to the partition's open batch, opening one if buffer.memory allows; false if it must wait for memory. */
  private appendNow(queue: PartitionQueue, record: ProducerRecord, timestamp: number): boolean {
    let builder = queue.open ?? this.tryOpenBuilder(queue)
    if (builder === null) return false
    if (!builder.tryAppend(record, timestamp)) {
      this.closeBatch(queue)
      builder = this.tryOpenBuilder(queue)
      if (builder === null) return false
      builder.tryAppend(record, timestamp)
    }
    this.stats.recordsAccepted++
    queue.accepted++
    if (builder.sizeBytes >= this.config.batchSizeBytes) this.closeBatch(queue)
    return true
  }

  private async appendWhenMemoryFrees(queue: PartitionQueue, record: ProducerRecord, timestamp: number): Promise<void> {
    while (!this.appendNow(queue, record, timestamp)) await new Promise<void>((resolve) => this.memoryWaiters.push(resolve))
  }

  /** Sends every accepted record now and resolves when each is acknowledged or has failed. */
  async flush(): Promise<void> {
    for (const queue of this.queues) if (queue.open !== null) this.closeBatch(queue)
    if (this.isIdle()) return
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
  }

  /** Stops intake, flushes what was accepted, disconnects. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (this.started) await this.flush()
      } finally {
        if (this.retryTimer !== null) clearTimeout(this.retryTimer)
        for (const queue of this.queues) if (queue.lingerTimer !== null) clearTimeout(queue.lingerTimer)
        await this.sealer.close()
        await this.deps.cluster.disconnect().catch(() => undefined)
      }
    })()
    return this.closing
  }

  /**
   * With idempotence the broker checks each partition's sequence numbers, so later batches may go out before
   * earlier ones are answered (Kafka's max.in.flight.requests.per.connection). Without sequence numbers a retry
   * could reorder records, and a transaction's AddPartitionsToTxn must precede its partition's first batch:
   * one at a time there.
   */
  private get maxInFlightPerPartition(): number {
    return this.config.idempotent && this.transactionalId === undefined ? Math.max(1, Math.min(5, this.config.maxInFlightPerPartition)) : 1
  }

  private specFor(topic: string): CodecSpec {
    let spec = this.specsByTopic.get(topic)
    if (spec === undefined) {
      const named = this.config.topicCodecs?.[topic] ?? this.config.codec
      spec = resolveCodecSpec(named.codec, named.level)
      this.specsByTopic.set(topic, spec)
    }
    return spec
  }

  private labels(topic: string): BatchLabels {
    let labels = this.labelsByTopic.get(topic)
    if (labels === undefined) {
      const spec = this.specFor(topic)
      labels = { topic, codec: spec.codec, level: spec.level === null ? '' : String(spec.level) }
      this.labelsByTopic.set(topic, labels)
    }
    return labels
  }

  private async partitionCount(topic: string): Promise<number> {
    const known = this.partitionCounts.get(topic)
    if (known !== undefined) return known
    try {
      // Metadata of a topic created a moment ago may not have reached every broker yet (retriable).
      await retry(() => this.deps.cluster.addTargetTopic(topic), { retries: 5, initialDelayMs: 100, maxDelayMs: 1000 })
    } catch (err) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `cannot load metadata for topic ${topic}: ${errorMessage(err)}`, { cause: err, retriable: true })
    }
    const count = this.deps.cluster.findTopicPartitionMetadata(topic).length
    if (count === 0) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `topic ${topic} does not exist; create it first (squeeze does not rely on auto-creation)`)
    }
    this.partitionCounts.set(topic, count)
    return count
  }

  private queueFor(topic: string, partition: number): PartitionQueue {
    let byPartition = this.queuesByTopic.get(topic)
    if (byPartition === undefined) {
      byPartition = []
      this.queuesByTopic.set(topic, byPartition)
    }
    let queue = byPartition[partition]
    if (queue === undefined) {
      queue = { topic, partition, open: null, openedAt: 0, lingerTimer: null, queue: [], inFlight: 0, needsResend: false, accepted: 0, sequenceConfirmed: false, nextSequence: 0 }
      byPartition[partition] = queue
      this.queues.push(queue)
    }
    return queue
  }

  private tryOpenBuilder(queue: PartitionQueue): RecordBatchBuilder | null {
    if (queue.open !== null) return queue.open
    if (this.reservedBytes + this.config.batchSizeBytes > this.config.bufferMemoryBytes && this.reservedBytes > 0) return null
    this.reserve(this.config.batchSizeBytes)
    queue.open = new RecordBatchBuilder(this.config.batchSizeBytes, this.config.batchSizeBytes, this.allocateBatch)
    queue.openedAt = Date.now()
    queue.lingerTimer = setTimeout(() => this.closeBatch(queue), this.config.lingerMs)
    return queue.open
  }

  private reserve(bytes: number): void {
    this.reservedBytes += bytes
    this.deps.metrics?.bufferedBytes(this.reservedBytes)
  }

  private release(bytes: number): void {
    this.reservedBytes -= bytes
    this.deps.metrics?.bufferedBytes(this.reservedBytes)
    const waiters = this.memoryWaiters
    this.memoryWaiters = []
    for (const wake of waiters) wake()
  }

  /** Seals the partition's open batch (compressing it) and queues it for sending. */
  private closeBatch(queue: PartitionQueue): void {
    const builder = queue.open
    if (builder === null) return
    queue.open = null
    if (queue.lingerTimer !== null) clearTimeout(queue.lingerTimer)
    queue.lingerTimer = null
    const partitions = this.partitionCounts.get(queue.topic) ?? 1
    this.sticky.batchClosed(queue.topic, queue.partition, partitions)
    if (builder.recordCount === 0) {
      this.release(this.config.batchSizeBytes)
      return
    }
    // The batch takes its place in the partition's queue now, so batches leave in order however long each takes to compress.
    const pending: PendingBatch = { records: builder.recordCount, firstIndex: queue.accepted - builder.recordCount, inFlight: false, sealed: null, closedAt: Date.now(), reserved: this.config.batchSizeBytes, attempts: 0, retryAt: 0, stampedGeneration: -1 }
    queue.queue.push(pending)
    this.sealer.seal(builder.finish(), this.specFor(queue.topic), (result) => {
      if (result instanceof Error) {
        this.failBatch(queue, pending, new SqueezeError(ErrorCodes.PRODUCE_FAILED, `cannot compress a batch of ${pending.records} records for ${queue.topic}-${queue.partition}: ${result.message}`, { cause: result }))
        return
      }
      pending.sealed = result
      // The builder's buffer is garbage now; only the sealed batch stays reserved.
      this.release(pending.reserved - result.bytes.length)
      pending.reserved = result.bytes.length
      this.scheduleDrain()
    })
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return
    this.drainScheduled = true
    setImmediate(() => {
      this.drainScheduled = false
      this.drain().catch((err: unknown) => this.deps.log.error({ err }, 'producer drain failed'))
    })
  }

  private async drain(): Promise<void> {
    if (this.identityStale) {
      // One InitProducerId at a time: two drains each fetching a new id would stamp batches under both.
      this.identityRefresh ??= this.refreshIdentity().finally(() => {
        this.identityRefresh = null
      })
      await this.identityRefresh
      if (this.identityStale) return
    }
    const now = Date.now()
    // rounds[k]: each partition's k-th batch sent in this pass, by leader. Round k goes on the wire before
    // round k+1, on the one produce connection per broker, so the broker sees each partition's sequences in order.
    const rounds: Array<Map<number, InFlightEntry[]>> = []
    let earliestRetry = Number.POSITIVE_INFINITY
    for (const queue of this.queues) {
      if (queue.needsResend) {
        // After a failure, everything still in flight for the partition must come back before it is resent in order.
        if (queue.inFlight > 0) continue
        queue.needsResend = false
      }
      const head = queue.queue[0]
      if (head !== undefined && !head.inFlight && isReady(head) && now - head.closedAt > this.config.deliveryTimeoutMs) {
        this.failHead(queue, new SqueezeError(ErrorCodes.TIMEOUT, `batch of ${head.records} records for ${queue.topic}-${queue.partition} not acknowledged within delivery.timeout.ms ${this.config.deliveryTimeoutMs}`))
        continue
      }
      // Until the broker has acknowledged one batch of this producer id on the partition, it has no sequence to
      // check the next against (it takes any first sequence from a new producer), so one batch goes alone.
      const limit = queue.sequenceConfirmed ? this.maxInFlightPerPartition : 1
      let round = 0
      for (const batch of queue.queue) {
        if (queue.inFlight + round >= limit) break
        if (batch.inFlight) continue
        if (!isReady(batch)) break
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
        this.stamp(queue, batch)
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
        for (const request of this.splitByRequestSize(entries)) {
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
      }
    }
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
      const metadata = this.deps.cluster.findTopicPartitionMetadata(queue.topic).find((p) => p.partitionId === queue.partition)
      return metadata === undefined || metadata.leader < 0 ? undefined : metadata.leader
    } catch {
      return undefined
    }
  }

  /** Assigns the sequence range at first send, and again only if the producer epoch changed since. */
  private stamp(queue: PartitionQueue, batch: ReadyBatch): void {
    if (batch.stampedGeneration === this.generation) return
    const sequenced = this.config.idempotent || this.transactionalId !== undefined
    const state: BatchProducerState = sequenced
      ? { producerId: this.identity.producerId, producerEpoch: this.identity.producerEpoch, baseSequence: queue.nextSequence, transactional: this.transactionalId !== undefined }
      : { producerId: -1n, producerEpoch: -1, baseSequence: -1, transactional: false }
    if (sequenced) queue.nextSequence = (queue.nextSequence + batch.sealed.recordCount) % 2 ** 31
    stampProducerState(batch.sealed.bytes, state)
    batch.stampedGeneration = this.generation
  }

  private async sendRequest(leader: number, entries: InFlightEntry[]): Promise<void> {
    const batches: PartitionBatch[] = entries.map(({ queue, batch }) => ({ topic: queue.topic, partition: queue.partition, batch: batch.sealed.bytes }))
    let results
    try {
      await this.addPartitionsToTransaction(entries)
      const broker = await this.deps.cluster.findBroker({ nodeId: leader })
      const { request, response } = produceRequest({ acks: this.config.acks, timeoutMs: this.config.requestTimeoutMs, transactionalId: this.deps.transactionalId ?? null, batches })
      results = await broker.connectionPool.send({ request, response, requestTimeout: this.config.requestTimeoutMs + 5000 })
    } catch (err) {
      // Connection refused, reset or timed out: the batches may or may not have landed. Retrying is safe
      // with idempotence (the broker drops duplicate sequences); without it, at-least-once is what Kafka offers too.
      this.deps.log.warn({ err: errorMessage(err), leader, batches: entries.length }, 'produce request failed; will retry')
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
      if (code === 0 || code === 46 /* DUPLICATE_SEQUENCE_NUMBER: already written */) {
        this.acknowledge(queue, batch, result?.baseOffset ?? -1)
      } else if (code === 45 && this.transactionalId === undefined && queue.queue[0] !== batch) {
        // OUT_OF_ORDER_SEQUENCE_NUMBER behind an earlier batch of the partition that is not written yet:
        // that one is being retried, and this one is resent after it, in order.
        this.retryLater(queue, batch, String(code))
      } else if ((code === 45 || code === 59) && this.transactionalId === undefined /* OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID */) {
        this.identityStale = true
        this.retryLater(queue, batch, String(code))
      } else if (isRetriableProduceError(code)) {
        this.retryLater(queue, batch, String(code))
        this.refreshMetadata()
      } else if (code === 10 /* MESSAGE_TOO_LARGE */ && batch.sealed.recordCount > 1) {
        this.splitBatch(queue, batch, String(code))
      } else {
        this.failBatch(queue, batch, new SqueezeError(code === 10 ? ErrorCodes.RECORD_TOO_LARGE : code === 87 /* INVALID_RECORD */ ? ErrorCodes.RECORD_INVALID : ErrorCodes.PRODUCE_FAILED, `broker rejected a batch of ${batch.sealed.recordCount} records for ${queue.topic}-${queue.partition}: ${describeProduceError(code)}`))
      }
    }
  }

  /**
   * A batch over the topic's max.message.bytes goes again as two halves, in its place (Java's producer splits
   * too), until what the broker refuses is the one record that is too large, alone: the records around it get
   * through. The halves are compressed here, on this rare path.
   */
  private splitBatch(queue: PartitionQueue, batch: ReadyBatch, code: string): void {
    const records = readBatch(batch.sealed.bytes, { verifyCrc: false }).records
    const codec = createCodec(this.specFor(queue.topic))
    const half = Math.ceil(records.length / 2)
    const halves: PendingBatch[] = [records.slice(0, half), records.slice(half)].map((part, i) => {
      const sealed = buildBatch(part, codec)
      return { records: part.length, firstIndex: batch.firstIndex + i * half, inFlight: false, sealed, closedAt: batch.closedAt, reserved: sealed.bytes.length, attempts: 0, retryAt: 0, stampedGeneration: -1 }
    })
    queue.queue.splice(queue.queue.indexOf(batch), 1, ...halves)
    this.reserve(halves.reduce((sum, h) => sum + h.reserved, 0))
    this.release(batch.reserved)
    // The refused batch's sequence numbers were never taken. With one batch in flight per partition nothing
    // after it was stamped, so the halves take them over; otherwise a new epoch renumbers everything in order.
    if (this.maxInFlightPerPartition === 1) queue.nextSequence = batch.sealed.bytes.readInt32BE(BATCH.BASE_SEQUENCE)
    else if (this.config.idempotent) this.identityStale = true
    queue.needsResend = true
    this.stats.retries++
    this.deps.metrics?.retried(this.labels(queue.topic), code)
    this.deps.log.warn({ topic: queue.topic, partition: queue.partition, records: records.length }, 'batch over the topic\'s max.message.bytes; resending it in halves')
  }

  private acknowledge(queue: PartitionQueue, batch: ReadyBatch, baseOffset: number): void {
    // Normally the head; after a timed-out request whose batches did land, a later batch can be answered first.
    if (queue.queue[0] === batch) queue.queue.shift()
    else queue.queue.splice(queue.queue.indexOf(batch), 1)
    if (batch.stampedGeneration === this.generation) queue.sequenceConfirmed = true
    this.release(batch.reserved)
    const { sealed } = batch
    this.stats.recordsAcked += sealed.recordCount
    this.stats.batchesAcked++
    this.stats.uncompressedBytes += sealed.uncompressedBytes
    this.stats.compressedBytes += sealed.bytes.length
    this.stats.compressCpuSeconds += sealed.compressCpuSeconds
    this.deps.metrics?.batchSent(this.labels(queue.topic), {
      records: sealed.recordCount,
      uncompressedBytes: sealed.uncompressedBytes,
      compressedBytes: sealed.bytes.length,
      compressCpuSeconds: sealed.compressCpuSeconds,
      latencySeconds: (Date.now() - batch.closedAt) / 1000
    })
    if (this.ackHandlers.length > 0) {
      const acked: AckedBatch = {
        topic: queue.topic, partition: queue.partition, baseOffset, records: sealed.recordCount,
        crc: sealed.bytes.readUInt32BE(BATCH.CRC), sizeBytes: sealed.bytes.length, uncompressedBytes: sealed.uncompressedBytes, compressCpuSeconds: sealed.compressCpuSeconds
      }
      for (const handler of this.ackHandlers) handler(acked)
    }
  }

  private failHead(queue: PartitionQueue, error: SqueezeError): void {
    const batch = queue.queue[0]
    if (batch !== undefined) this.failBatch(queue, batch, error)
  }

  private failBatch(queue: PartitionQueue, batch: PendingBatch, error: SqueezeError): void {
    const at = queue.queue.indexOf(batch)
    if (at === -1) return
    queue.queue.splice(at, 1)
    this.release(batch.reserved)
    const records = batch.records
    this.stats.recordsFailed += records
    this.deps.metrics?.recordsFailed(this.labels(queue.topic), records, error.code)
    this.deps.log.error({ topic: queue.topic, partition: queue.partition, records, code: error.code }, error.message)
    // A copy: a batch without compression is a view of a builder buffer that goes back to the pool.
    const sent = this.failureHandlers.length === 0 || batch.sealed === null ? [] : readBatch(Buffer.from(batch.sealed.bytes), { verifyCrc: false }).records
    // A failed batch that was given sequence numbers leaves a hole in them; a new epoch starts them afresh.
    // Inside a transaction the whole transaction fails instead: commitTransaction() aborts it and throws.
    if (this.transactionalId !== undefined) this.transactionError ??= error
    else if (this.config.idempotent && batch.stampedGeneration >= 0) this.identityStale = true
    for (const handler of this.failureHandlers) handler({ topic: queue.topic, partition: queue.partition, records, firstRecordIndex: batch.firstIndex, sent, error })
    this.checkIdle()
  }

  private retryLater(queue: PartitionQueue, batch: PendingBatch, code: string): void {
    queue.needsResend = true
    batch.retryAt = Date.now() + this.backoff(batch.attempts++)
    this.stats.retries++
    this.deps.metrics?.retried(this.labels(queue.topic), code)
  }

  private backoff(attempt: number): number {
    const exponential = Math.min(this.config.retryBackoffMaxMs, this.config.retryBackoffMs * 2 ** attempt)
    return exponential * (0.8 + 0.4 * Math.random())
  }

  private scheduleRetry(delayMs: number): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      this.scheduleDrain()
    }, Math.max(1, delayMs))
  }

  private refreshMetadata(): void {
    this.deps.cluster.refreshMetadata().catch((err: unknown) => this.deps.log.debug({ err: errorMessage(err) }, 'metadata refresh failed'))
  }

  private async initProducerId(): Promise<void> {
    // A fresh cluster answers COORDINATOR_LOAD_IN_PROGRESS for a few seconds; kafkajs marks it retriable.
    const transactionalId = this.transactionalId
    const result = await retry(async () => {
      // A transactional id is owned by its transaction coordinator; a plain producer id comes from any broker.
      const broker = transactionalId === undefined
        ? await this.deps.cluster.findControllerBroker()
        : await this.deps.cluster.findGroupCoordinator({ groupId: transactionalId, coordinatorType: COORDINATOR_TYPES.TRANSACTION })
      return broker.initProducerId({ ...(transactionalId === undefined ? {} : { transactionalId }), transactionTimeout: 60000 })
    }, { retries: 10, initialDelayMs: 100, maxDelayMs: 2000, shouldRetry: isTransient, onRetry: (err) => this.deps.log.debug({ err: errorMessage(err) }, 'InitProducerId failed; retrying') })
    this.identity = { producerId: BigInt(result.producerId), producerEpoch: result.producerEpoch }
    this.generation++
    for (const queue of this.queues) {
      queue.nextSequence = 0
      queue.sequenceConfirmed = false
    }
  }

  private async refreshIdentity(): Promise<void> {
    if (this.inFlightRequests > 0) return
    try {
      await this.initProducerId()
      this.identityStale = false
      this.deps.log.info({ producerId: String(this.identity.producerId) }, 'new producer id; sequence numbers restart')
    } catch (err) {
      this.deps.log.warn({ err: errorMessage(err) }, 'cannot obtain a producer id yet; will retry')
      this.scheduleRetry(this.config.retryBackoffMs)
    }
  }

  private isIdle(): boolean {
    if (this.inFlightRequests > 0) return false
    for (const queue of this.queues) if (queue.open !== null || queue.queue.length > 0) return false
    return true
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const wake of waiters) wake()
  }
}
