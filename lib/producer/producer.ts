// The producer's public face: wires the accumulator, sender, idempotence and transactions, and takes records in.
import { formatCodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { connectionFailure } from '../kafka/connect-failure.js'
import type { GroupMemberIdentity } from '../kafka/txn-offset-commit.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import type { OutgoingRecord, RawRecords, SharedHeaders } from '../protocol/record.js'
import { BATCH } from '../protocol/batch-layout.js'
import type { OpenBatch, ValueWriter } from '../protocol/record-batch-builder.js'
import type { ProducerMetrics } from '../metrics/producer-metrics.js'
import { RecordAccumulator, type ProducerRecord } from './accumulator.js'
import type { SealerLoad } from './batch-sealer.js'
import { REQUEST_TIMEOUT_MARGIN_MS, TopicCodecs, type ProducerConfig } from './config.js'
import { Idempotence } from './idempotence.js'
import type { PartitionQueue } from './partition-queue.js'
import { Sender, type AckedBatch, type DeliveryFailure, type DeliveryStats } from './sender.js'
import { Transactions } from './transactions.js'

export { DEFAULT_PRODUCER_CONFIG, type ProducerConfig } from './config.js'
export type { ProducerRecord } from './accumulator.js'
export type { SealerLoad, ThreadLoad } from './batch-sealer.js'
export { isRecordRefusal, type AckedBatch, type DeliveryFailure } from './sender.js'

export interface ProducerStats extends DeliveryStats {
  recordsAccepted: number
}

/** Records send() accepted for one topic-partition so far: where a DeliveryFailure's firstRecordIndex counts from. */
export interface AcceptedCount {
  readonly topic: string
  readonly partition: number
  readonly accepted: number
}

export interface ProducerDeps {
  readonly cluster: KafkajsCluster
  readonly log: Logger
  readonly metrics?: ProducerMetrics
  readonly random?: () => number
  readonly transactionalId?: string
  /** Tests only: a compression thread of their own (see AccumulatorDeps). */
  readonly compressionWorkerUrl?: URL
}

const ACCEPTED: Promise<void> = Promise.resolve()
/** What a record adds to its key, value and headers in a request, at most: its framing and the request's. */
const RECORD_OVERHEAD_BYTES = 64

/**
 * A macrotask's turn: awaiting a resolved promise runs only microtasks, so an intake loop over records in memory
 * would otherwise fill all of buffer.memory before one sealed batch, produce request or acknowledgement is handled.
 */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * kafkajs's disconnect first waits for every request still queued on its connections, those the sender gave up
 * on at request.timeout.ms too, until the connection's own timeout: against a broker that stopped answering that
 * would hold a shutdown whose records all have their outcome. The close waits for it at most the sender's margin.
 */
async function boundedDisconnect(cluster: KafkajsCluster): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, REQUEST_TIMEOUT_MARGIN_MS)
    timer.unref()
  })
  await Promise.race([cluster.disconnect().catch(() => undefined), bound])
  clearTimeout(timer)
}

/**
 * Batches records per partition, compresses each batch with its own codec instance and level, and sends
 * finished batches through kafkajs's connections, in order per partition across retries.
 */
export class Producer {
  private readonly codecs: TopicCodecs
  private readonly accumulator: RecordAccumulator
  private readonly sender: Sender
  private readonly idempotence: Idempotence
  private readonly transactions: Transactions | null
  private closing: Promise<void> | null = null
  private started = false

  constructor(
    private readonly config: ProducerConfig,
    private readonly deps: ProducerDeps
  ) {
    this.codecs = new TopicCodecs(config)
    this.accumulator = new RecordAccumulator(config, deps, this.codecs, {
      batchReady: () => this.sender.scheduleDrain(),
      sealFailed: (queue, batch, error) => this.sender.failBatch(queue, batch, error)
    })
    this.idempotence = new Idempotence(
      config,
      { ...deps, retryAfter: (delayMs) => this.sender.scheduleRetry(delayMs) },
      this.accumulator.queues
    )
    this.transactions =
      deps.transactionalId === undefined ? null : new Transactions(deps.transactionalId, deps.cluster, this.idempotence)
    this.sender = new Sender(config, deps, this.accumulator, this.codecs, this.idempotence, this.transactions)
  }

  get codecLabel(): string {
    return formatCodecSpec(this.config.codec)
  }

  /** Connects and, with idempotence, obtains a producer id. Fails with a clear error if no broker answers. */
  async start(): Promise<void> {
    // The compression thread boots (on its own core) while this one connects.
    this.accumulator.start()
    try {
      await this.deps.cluster.connect()
      await this.deps.cluster.refreshMetadata()
    } catch (err) {
      throw connectionFailure(err)
    }
    if (this.idempotence.sequenced) await this.idempotence.init()
    this.started = true
  }

  /** Starts a transaction: records sent from now until commit or abort become visible together, or never. */
  beginTransaction(): void {
    if (this.transactions === null)
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'beginTransaction needs a transactionalId')
    this.transactions.begin()
  }

  /**
   * Adds consumer offsets to the open transaction, so they commit exactly when its records do. `member` (the
   * consumer's member id and generation or epoch, as Java's ConsumerGroupMetadata) lets the group coordinator
   * refuse them from a member that lost the partitions (KIP-447).
   */
  async sendOffsets(
    groupId: string,
    offsets: ReadonlyArray<{ topic: string; partition: number; offset: number }>,
    member?: GroupMemberIdentity
  ): Promise<void> {
    await this.transactional().sendOffsets(groupId, offsets, member)
  }

  /** Sends everything, then commits. If any batch of the transaction failed, aborts it instead and throws. */
  async commitTransaction(): Promise<void> {
    await this.transactional().commit(() => this.flush())
  }

  async abortTransaction(): Promise<void> {
    await this.transactional().abort(() => this.flush())
  }

  onDeliveryFailure(handler: (failure: DeliveryFailure) => void): void {
    this.sender.onDeliveryFailure(handler)
  }

  onBatchAcked(handler: (batch: AckedBatch) => void): void {
    this.sender.onBatchAcked(handler)
  }

  snapshot(): Readonly<ProducerStats> {
    return { recordsAccepted: this.accumulator.recordsAccepted, ...this.sender.stats }
  }

  /**
   * Per topic-partition, the records accepted so far: records accepted between two such counts are those a
   * DeliveryFailure names when its firstRecordIndex range falls between them.
   */
  acceptedCounts(): AcceptedCount[] {
    return this.accumulator.queues.map((queue) => ({
      topic: queue.topic,
      partition: queue.partition,
      accepted: queue.accepted
    }))
  }

  /** Bytes reserved right now by open and unacknowledged batches. */
  get bufferedBytes(): number {
    return this.accumulator.reservedBytes
  }

  /**
   * Announces about `bytes` of input still to come (a file read once): with squeeze.compression.inline.seconds, the
   * first compression thread then starts as soon as compressing that input is projected to cost more than that,
   * instead of after that much was spent on the event loop.
   */
  expectInputBytes(bytes: number): void {
    this.accumulator.expect(bytes)
  }

  /** Bytes waiting for compression, and each compression thread's busy, idle and CPU seconds so far. */
  compressionLoad(): SealerLoad {
    return this.accumulator.compressionLoad()
  }

  /**
   * Accepts one record. Resolves once it sits in a batch; waits while buffer.memory is full (backpressure).
   * Delivery outcome is reported through stats, metrics and onDeliveryFailure, and awaited by flush().
   * Not an async function: a record that fits is appended synchronously and gets one shared resolved promise,
   * because a promise chain per record was a fifth of the producer's CPU (allocation and GC) in the profile.
   */
  send(record: ProducerRecord): Promise<void> {
    let queue
    try {
      this.checkAccepting(record)
      queue = this.accumulator.queueFor(record)
    } catch (err) {
      return Promise.reject(err)
    }
    if (queue === undefined) return this.sendAfterMetadata(record)
    const timestamp = record.timestamp ?? Date.now()
    if (this.accumulator.append(queue, record, timestamp)) return ACCEPTED
    return this.accumulator.appendWhenMemoryFrees(queue, record, timestamp)
  }

  /**
   * Accepts one keyless record whose value `write` puts straight into its batch (a binary format's writer, see
   * RecordBatchBuilder.tryAppendWritten): no Buffer per record. Undefined when it was accepted at once; else a
   * promise, as send()'s: where it cannot be appended at once (the topic's metadata not loaded yet, buffer.memory
   * full, a bound beyond max.request.size, the producer closed, a transactional producer with no open transaction)
   * the value is written into a Buffer of its own and goes through send(), with its checks and errors. Inside an
   * open transaction it is appended as send() would: the sender adds a partition to the transaction before its
   * first batch, whichever way its records came. `headers`, the same for many records, are copied as encoded.
   */
  sendWritten<T>(
    topic: string,
    maxValueBytes: number,
    write: ValueWriter<T>,
    arg: T,
    headers?: SharedHeaders
  ): Promise<void> | undefined {
    if (
      this.closing === null &&
      this.started &&
      (this.transactions === null || this.transactions.isOpen) &&
      maxValueBytes + RECORD_OVERHEAD_BYTES + (headers?.bytes.length ?? 0) <= this.config.maxRequestSizeBytes
    ) {
      const queue = this.accumulator.queueFor({ topic, key: null, value: null })
      if (
        queue !== undefined &&
        this.accumulator.appendWritten(queue, maxValueBytes, write, arg, Date.now(), headers?.bytes)
      )
        return undefined
    }
    const value = Buffer.alloc(maxValueBytes)
    const end = write(value, new DataView(value.buffer, value.byteOffset, value.length), 0, arg)
    const record = { topic, key: null, value: value.subarray(0, end) }
    return this.send(headers === undefined ? record : { ...record, headers: headers.list })
  }

  /**
   * Accepts records in order, waiting only where buffer.memory is full: no await per record, which an
   * intake loop of `await send()` pays even when every record fits. On an error the records before the
   * failing one are accepted, the rest are not.
   */
  async sendMany(records: readonly ProducerRecord[]): Promise<void> {
    let closed = this.accumulator.batchesClosed
    for (const record of records) {
      const accepted = this.send(record)
      if (accepted !== ACCEPTED) await accepted
      else if (closed !== this.accumulator.batchesClosed) await yieldToEventLoop()
      closed = this.accumulator.batchesClosed
    }
  }

  /**
   * Accepts records for one topic-partition in order, as sendMany does, without a ProducerRecord per record:
   * the copier hands the same source records to every destination.
   */
  async sendManyTo(topic: string, partition: number, records: readonly OutgoingRecord[]): Promise<void> {
    let queue: PartitionQueue | undefined
    for (const record of records) {
      this.checkAccepting(record)
      queue ??=
        this.accumulator.queueAt(topic, partition) ??
        (await this.accumulator.queueAfterMetadata({ topic, partition, key: null, value: null }))
      const timestamp = record.timestamp ?? Date.now()
      if (!this.accumulator.append(queue, record, timestamp))
        await this.accumulator.appendWhenMemoryFrees(queue, record, timestamp)
    }
  }

  /**
   * sendManyTo for records as read, `records` from index `from` up to `to`: each one's key, value and headers
   * are copied into the batch as encoded, not decoded into objects and encoded again for every destination.
   */
  async sendRawTo(topic: string, partition: number, records: RawRecords, from: number, to: number): Promise<void> {
    let queue: PartitionQueue | undefined
    for (let i = from; i < to; i++) {
      const start = records.starts[i] as number
      const end = records.ends[i] as number
      this.checkAcceptingBytes(end - start + RECORD_OVERHEAD_BYTES)
      queue ??=
        this.accumulator.queueAt(topic, partition) ??
        (await this.accumulator.queueAfterMetadata({ topic, partition, key: null, value: null }))
      const timestamp = records.timestamps[i] as number
      while (!this.accumulator.appendRaw(queue, records.bytes, start, end, timestamp))
        await this.accumulator.memoryFreed()
    }
  }

  /**
   * Takes a whole batch's records section as read (ReadBatch.whole) as one batch of its own for `partition`:
   * compressed with the topic's codec, and given this producer's id, epoch, sequence and transactional bit when
   * sent. Waits while buffer.memory is full. False, with nothing taken, when the batch is over batch.size: the
   * caller sends its records one by one, into batches of batch.size.
   */
  async sendBatchTo(topic: string, partition: number, batch: OpenBatch): Promise<boolean> {
    const size = BATCH.HEADER_BYTES + batch.records.byteLength
    if (size > this.config.batchSizeBytes) return false
    this.checkAcceptingBytes(size)
    const queue =
      this.accumulator.queueAt(topic, partition) ??
      (await this.accumulator.queueAfterMetadata({ topic, partition, key: null, value: null }))
    while (!this.accumulator.appendBatch(queue, batch)) await this.accumulator.memoryFreed()
    return true
  }

  /** Sends every accepted record now and resolves when each is acknowledged or has failed. */
  async flush(): Promise<void> {
    this.accumulator.closeAll()
    await this.sender.whenIdle()
  }

  /**
   * Sends every record accepted so far now and resolves once each of them is acknowledged or has failed. Unlike
   * flush(), records accepted meanwhile go into new batches and are not waited for, so intake goes on.
   */
  flushAccepted(): Promise<void> {
    this.accumulator.closeAll()
    return this.whenAcceptedSettled()
  }

  /**
   * Resolves once every record accepted so far is acknowledged or has failed, as flushAccepted() without sending
   * them sooner: their batches go when linger.ms or batch.size closes them.
   */
  whenAcceptedSettled(): Promise<void> {
    return this.sender.whenSettled(this.accumulator.queues.map((queue) => [queue, queue.accepted] as const))
  }

  /** Stops intake, flushes what was accepted, disconnects. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (this.started) await this.flush()
      } finally {
        this.sender.stop()
        await this.accumulator.close()
        await boundedDisconnect(this.deps.cluster)
      }
    })()
    return this.closing
  }

  private checkAccepting(record: OutgoingRecord): void {
    let size = (record.key?.length ?? 0) + (record.value?.length ?? 0) + RECORD_OVERHEAD_BYTES
    if (record.headers !== undefined) for (const h of record.headers) size += h.key.length + (h.value?.length ?? 0) + 10
    this.checkAcceptingBytes(size)
  }

  /** `size`: the record's bytes on the wire, about. */
  private checkAcceptingBytes(size: number): void {
    if (this.closing !== null || !this.started) {
      throw new SqueezeError(
        ErrorCodes.PRODUCER_CLOSED,
        this.started ? 'producer is closing; no new records are accepted' : 'producer not started: call start() first'
      )
    }
    if (size > this.config.maxRequestSizeBytes) {
      throw new SqueezeError(
        ErrorCodes.RECORD_TOO_LARGE,
        `record of about ${size} bytes exceeds max.request.size ${this.config.maxRequestSizeBytes}; raise max.request.size (and the topic's max.message.bytes) or split the record`
      )
    }
    if (this.transactions !== null && !this.transactions.isOpen) {
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'transactional producer: call beginTransaction() before send()')
    }
  }

  private async sendAfterMetadata(record: ProducerRecord): Promise<void> {
    const queue = await this.accumulator.queueAfterMetadata(record)
    await this.accumulator.appendWhenMemoryFrees(queue, record, record.timestamp ?? Date.now())
  }

  private transactional(): Transactions {
    if (this.transactions === null)
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'no open transaction: call beginTransaction() first')
    return this.transactions
  }
}
