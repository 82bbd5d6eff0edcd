// The accumulator: records into per-partition batches, closed by linger.ms or batch.size, within buffer.memory.
import { isAdaptive } from '../codecs/index.js'
import { PartitionTable } from '../kafka/group-by-topic.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { ProducerMetrics } from '../metrics/producer-metrics.js'
import { BATCH } from '../protocol/batch-layout.js'
import { RecordBatchBuilder, type OpenBatch, type ValueWriter } from '../protocol/record-batch-builder.js'
import type { OutgoingRecord } from '../protocol/record.js'
import { retry } from '../retry.js'
import { createBatchSealer, SPARE_BUFFERS, type BatchSealer, type SealerLoad } from './batch-sealer.js'
import { BatchLevels } from './batch-levels.js'
import type { ProducerConfig, TopicCodecs } from './config.js'
import { newPartitionQueue, newPendingBatch, type PartitionQueue, type PendingBatch } from './partition-queue.js'
import { partitionForKey, StickyPartitioner } from './partitioner.js'

export interface ProducerRecord extends OutgoingRecord {
  readonly topic: string
  readonly partition?: number
}

/** What the accumulator tells the sender. */
export interface AccumulatorEvents {
  /** A closed batch finished compressing and can be sent. */
  batchReady(): void
  /** A closed batch could not be compressed; it is still in its queue. */
  sealFailed(queue: PartitionQueue, batch: PendingBatch, error: SqueezeError): void
}

export interface AccumulatorDeps {
  readonly cluster: KafkajsCluster
  readonly log: Logger
  readonly metrics?: ProducerMetrics
  readonly random?: () => number
  /** A compression thread of the test's own (one that is slow, or dies); the real one when absent. */
  readonly compressionWorkerUrl?: URL
}

type AccumulatorConfig = Pick<
  ProducerConfig,
  'lingerMs' | 'batchSizeBytes' | 'bufferMemoryBytes' | 'compressionThreads' | 'adaptiveLevel' | 'codec' | 'topicCodecs'
> &
  Partial<Pick<ProducerConfig, 'compressionInlineSeconds'>>

/**
 * Each open batch reserves batch.size bytes of buffer.memory; once sealed it holds only its compressed size,
 * released when the sender acknowledges or fails it. A record that would need memory beyond the limit waits.
 */
export class RecordAccumulator {
  /** Every partition queue, in the order first written to: the sender drains them in this order. */
  readonly queues: PartitionQueue[] = []
  recordsAccepted = 0
  /** Batches closed so far (sealed or being sealed): intake yields to the event loop when this moves. */
  batchesClosed = 0
  private readonly sealer: BatchSealer
  private readonly levels: BatchLevels
  private readonly allocateBatch = (size: number): Buffer => this.sealer.buffer(size)
  private readonly partitionCounts = new Map<string, number>()
  /** Per topic, indexed by partition: a string key per record cost more than the lookup it saved. */
  private readonly queuesByTopic = new PartitionTable((topic, partition) => {
    const queue = newPartitionQueue(topic, partition)
    this.queues.push(queue)
    return queue
  })
  private readonly sticky: StickyPartitioner
  private reserved = 0
  private memoryWaiters: Array<() => void> = []

  constructor(
    private readonly config: AccumulatorConfig,
    private readonly deps: AccumulatorDeps,
    codecs: TopicCodecs,
    private readonly events: AccumulatorEvents
  ) {
    const batchesInMemory = Math.floor(config.bufferMemoryBytes / config.batchSizeBytes)
    // An adaptive level reads the threads' load from its first batch on: their start is not put off.
    const adaptive = [config.codec, ...Object.values(config.topicCodecs ?? {})].some(isAdaptive)
    const inlineSeconds = adaptive ? 0 : (config.compressionInlineSeconds ?? 0)
    this.sealer = createBatchSealer(
      config.compressionThreads,
      deps.log,
      deps.compressionWorkerUrl,
      Math.max(SPARE_BUFFERS, batchesInMemory),
      inlineSeconds
    )
    this.levels = new BatchLevels(config, codecs, { ...deps, threadsLeft: () => this.sealer.threadsLeft() })
    this.sticky = new StickyPartitioner(deps.random)
  }

  /**
   * Starts the first compression thread now, not under the first full batch, if one is needed and its start is not
   * put off until inline compression has cost squeeze.compression.inline.seconds.
   */
  start(): void {
    this.sealer.start([this.config.codec, ...Object.values(this.config.topicCodecs ?? {})])
  }

  /** About `bytes` of input are still to come (see BatchSealer.expect). */
  expect(bytes: number): void {
    this.sealer.expect(bytes)
  }

  /** Bytes waiting for compression, and how busy each compression thread has been. */
  compressionLoad(): SealerLoad {
    return this.sealer.load()
  }

  /** Bytes reserved right now by open and unacknowledged batches. */
  get reservedBytes(): number {
    return this.reserved
  }

  /** The record's partition queue, or undefined while its topic's metadata is not loaded yet (see queueAfterMetadata). */
  queueFor(record: ProducerRecord): PartitionQueue | undefined {
    const partitions = this.partitionCounts.get(record.topic)
    if (partitions === undefined) return undefined
    return this.queuesByTopic.get(record.topic, this.choosePartition(record, partitions))
  }

  /** The queue of a partition given by number, as queueFor; undefined while the topic's metadata is not loaded. */
  queueAt(topic: string, partition: number): PartitionQueue | undefined {
    const partitions = this.partitionCounts.get(topic)
    if (partitions === undefined) return undefined
    checkPartition(topic, partition, partitions)
    return this.queuesByTopic.get(topic, partition)
  }

  async queueAfterMetadata(record: ProducerRecord): Promise<PartitionQueue> {
    return this.queuesByTopic.get(record.topic, this.choosePartition(record, await this.partitionCount(record.topic)))
  }

  /** Appends to the partition's open batch, opening one if buffer.memory allows; false if it must wait for memory. */
  append(queue: PartitionQueue, record: OutgoingRecord, timestamp: number): boolean {
    const builder = queue.open ?? this.tryOpenBuilder(queue)
    if (builder === null) return false
    if (builder.tryAppend(record, timestamp)) return this.accepted(queue, builder)
    const next = this.nextBuilder(queue)
    if (next === null) return false
    next.tryAppend(record, timestamp)
    return this.accepted(queue, next)
  }

  /** append() for a record given as its key, value and headers encoded as read (RawRecords), copied as they are. */
  appendRaw(queue: PartitionQueue, fields: Buffer, start: number, end: number, timestamp: number): boolean {
    const builder = queue.open ?? this.tryOpenBuilder(queue)
    if (builder === null) return false
    if (builder.tryAppendRaw(fields, start, end, timestamp)) return this.accepted(queue, builder)
    const next = this.nextBuilder(queue)
    if (next === null) return false
    next.tryAppendRaw(fields, start, end, timestamp)
    return this.accepted(queue, next)
  }

  /** append() of a keyless record whose value `write` puts straight into the batch (RecordBatchBuilder.tryAppendWritten). */
  appendWritten<T>(
    queue: PartitionQueue,
    maxValueBytes: number,
    write: ValueWriter<T>,
    arg: T,
    timestamp: number,
    headers?: Buffer
  ): boolean {
    const builder = queue.open ?? this.tryOpenBuilder(queue)
    if (builder === null) return false
    if (builder.tryAppendWritten(maxValueBytes, timestamp, write, arg, headers)) return this.accepted(queue, builder)
    const next = this.nextBuilder(queue)
    if (next === null) return false
    next.tryAppendWritten(maxValueBytes, timestamp, write, arg, headers)
    return this.accepted(queue, next)
  }

  /**
   * Queues the records section of a whole batch read elsewhere (offset deltas 0..n-1, timestamps relative to its
   * first) as one batch of its own, compressed with the topic's codec: the partition's open batch closes first, so
   * records keep their order. False, with nothing taken, while buffer.memory has no room for it.
   */
  appendBatch(queue: PartitionQueue, batch: OpenBatch): boolean {
    const size = BATCH.HEADER_BYTES + batch.records.byteLength
    if (this.reserved + size > this.config.bufferMemoryBytes && this.reserved > 0) return false
    this.closeBatch(queue)
    this.reserve(size)
    this.recordsAccepted += batch.count
    queue.accepted += batch.count
    this.batchesClosed++
    this.queueForSealing(queue, batch, size)
    return true
  }

  /** The open batch was full: closes it and opens the next, if buffer.memory allows (a lone record always fits one). */
  private nextBuilder(queue: PartitionQueue): RecordBatchBuilder | null {
    this.closeBatch(queue)
    return this.tryOpenBuilder(queue)
  }

  private accepted(queue: PartitionQueue, builder: RecordBatchBuilder): true {
    this.recordsAccepted++
    queue.accepted++
    if (builder.sizeBytes >= this.config.batchSizeBytes) this.closeBatch(queue)
    return true
  }

  /** Resolves once some of buffer.memory is released: an append that found it full may be tried again. */
  memoryFreed(): Promise<void> {
    return new Promise<void>((resolve) => this.memoryWaiters.push(resolve))
  }

  async appendWhenMemoryFrees(queue: PartitionQueue, record: OutgoingRecord, timestamp: number): Promise<void> {
    while (!this.append(queue, record, timestamp)) await this.memoryFreed()
  }

  /** Closes every open batch, without waiting for linger.ms. */
  closeAll(): void {
    for (const queue of this.queues) if (queue.open !== null) this.closeBatch(queue)
  }

  /** No open batch and no batch waiting for an acknowledgement. */
  isEmpty(): boolean {
    for (const queue of this.queues) if (queue.open !== null || queue.queue.length > 0) return false
    return true
  }

  reserve(bytes: number): void {
    this.reserved += bytes
    this.deps.metrics?.bufferedBytes(this.reserved)
  }

  release(bytes: number): void {
    this.reserved -= bytes
    this.deps.metrics?.bufferedBytes(this.reserved)
    const waiters = this.memoryWaiters
    this.memoryWaiters = []
    for (const wake of waiters) wake()
  }

  async close(): Promise<void> {
    for (const queue of this.queues) if (queue.lingerTimer !== null) clearTimeout(queue.lingerTimer)
    await this.sealer.close()
  }

  private choosePartition(record: ProducerRecord, partitions: number): number {
    if (record.partition !== undefined) {
      checkPartition(record.topic, record.partition, partitions)
      return record.partition
    }
    if (record.key !== null) return partitionForKey(record.key, partitions)
    return this.sticky.partition(record.topic, partitions)
  }

  private async partitionCount(topic: string): Promise<number> {
    const known = this.partitionCounts.get(topic)
    if (known !== undefined) return known
    try {
      // Metadata of a topic created a moment ago may not have reached every broker yet (retriable).
      await retry(() => this.deps.cluster.addTargetTopic(topic), { retries: 5, initialDelayMs: 100, maxDelayMs: 1000 })
    } catch (err) {
      throw new SqueezeError(
        ErrorCodes.PRODUCE_FAILED,
        `cannot load metadata for topic ${topic}: ${errorMessage(err)}`,
        { cause: err, retriable: true }
      )
    }
    const count = this.deps.cluster.findTopicPartitionMetadata(topic).length
    if (count === 0) {
      throw new SqueezeError(
        ErrorCodes.PRODUCE_FAILED,
        `topic ${topic} does not exist; create it first (squeeze does not rely on auto-creation)`
      )
    }
    this.partitionCounts.set(topic, count)
    return count
  }

  private tryOpenBuilder(queue: PartitionQueue): RecordBatchBuilder | null {
    if (queue.open !== null) return queue.open
    if (this.reserved + this.config.batchSizeBytes > this.config.bufferMemoryBytes && this.reserved > 0) return null
    this.reserve(this.config.batchSizeBytes)
    queue.open = new RecordBatchBuilder(this.config.batchSizeBytes, this.config.batchSizeBytes, this.allocateBatch)
    queue.lingerTimer = setTimeout(() => this.closeBatch(queue), this.config.lingerMs)
    return queue.open
  }

  /** Seals the partition's open batch (compressing it) and queues it for sending. */
  private closeBatch(queue: PartitionQueue): void {
    const builder = queue.open
    if (builder === null) return
    queue.open = null
    if (queue.lingerTimer !== null) clearTimeout(queue.lingerTimer)
    queue.lingerTimer = null
    this.batchesClosed++
    const partitions = this.partitionCounts.get(queue.topic) ?? 1
    this.sticky.batchClosed(queue.topic, queue.partition, partitions)
    if (builder.recordCount === 0) {
      this.release(this.config.batchSizeBytes)
      return
    }
    this.queueForSealing(queue, builder.finish(), this.config.batchSizeBytes)
  }

  /** Compresses a closed batch holding `reserved` bytes of buffer.memory and queues it for sending. */
  private queueForSealing(queue: PartitionQueue, batch: OpenBatch, reserved: number): void {
    // The batch takes its place in the partition's queue now, so batches leave in order however long each takes to compress.
    const recordsBytes = batch.records.byteLength
    const spec = this.levels.sealing(queue.topic, recordsBytes)
    const pending = newPendingBatch(batch.count, queue.accepted - batch.count, reserved, Date.now(), spec)
    queue.queue.push(pending)
    this.sealer.seal(batch, spec, (result, timing) => {
      this.levels.sealed(queue.topic, spec, recordsBytes, pending.closedAt, this.reserved, result, timing)
      if (result instanceof Error) {
        this.events.sealFailed(
          queue,
          pending,
          new SqueezeError(
            ErrorCodes.PRODUCE_FAILED,
            `cannot compress a batch of ${pending.records} records for ${queue.topic}-${queue.partition}: ${result.message}`,
            { cause: result }
          )
        )
        return
      }
      pending.sealed = result
      // The builder's buffer is garbage now; only the sealed batch stays reserved.
      this.release(pending.reserved - result.bytes.length)
      pending.reserved = result.bytes.length
      this.events.batchReady()
    })
  }
}

function checkPartition(topic: string, partition: number, partitions: number): void {
  if (!Number.isInteger(partition) || partition < 0 || partition >= partitions) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `partition ${partition} does not exist in ${topic} (${partitions} partitions)`
    )
  }
}
