// Idempotence: the producer id and epoch, each partition's sequence numbers, and the rules that keep batches
// in order when several of a partition are in flight or some must be sent again.
import { errorMessage } from '../errors.js'
import { KafkaErrorCode } from '../kafka/error-codes.js'
import { COORDINATOR_TYPES, type KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import { BATCH } from '../protocol/batch-layout.js'
import { stampProducerState, type BatchProducerState } from '../protocol/record-batch-builder.js'
import { COORDINATOR_RETRY, retry } from '../retry.js'
import type { ProducerConfig } from './config.js'
import type { PartitionQueue, PendingBatch, ReadyBatch } from './partition-queue.js'

export interface IdempotenceDeps {
  readonly cluster: KafkajsCluster
  readonly log: Logger
  readonly transactionalId?: string
  /** Asks the sender to try again after `delayMs`, when no producer id could be obtained. */
  readonly retryAfter: (delayMs: number) => void
}

type IdempotenceConfig = Pick<ProducerConfig, 'idempotent' | 'maxInFlightPerPartition' | 'retryBackoffMs'>

const NOT_SEQUENCED: BatchProducerState = { producerId: -1n, producerEpoch: -1, baseSequence: -1, transactional: false }

/**
 * With a producer id, the broker checks each partition's sequence numbers and drops a batch it already wrote,
 * so retries never duplicate. A failed batch leaves a hole in the sequences; outside a transaction a new
 * producer id (InitProducerId) then restarts them at 0, and every batch not yet acknowledged is stamped again.
 */
export class Idempotence {
  /** Batches carry a producer id and sequences: enable.idempotence, or a transactional producer. */
  readonly sequenced: boolean
  producerId = -1n
  producerEpoch = -1
  /** Bumped by every new producer id: a batch stamped under an older one is stamped again before it is resent. */
  generation = 0
  private staleId = false
  private refreshing: Promise<void> | null = null
  private readonly transactional: boolean
  private readonly maxInFlight: number

  constructor(
    private readonly config: IdempotenceConfig,
    private readonly deps: IdempotenceDeps,
    private readonly queues: readonly PartitionQueue[]
  ) {
    this.transactional = deps.transactionalId !== undefined
    this.sequenced = config.idempotent || this.transactional
    // Without sequence numbers a retry could reorder records, and a transaction's AddPartitionsToTxn must precede
    // its partition's first batch: one at a time there (Kafka's max.in.flight.requests.per.connection otherwise).
    this.maxInFlight =
      config.idempotent && !this.transactional ? Math.max(1, Math.min(5, config.maxInFlightPerPartition)) : 1
  }

  /** InitProducerId: a new producer id (or epoch), and every partition's sequences restart at 0. */
  async init(): Promise<void> {
    const transactionalId = this.deps.transactionalId
    // A fresh cluster answers COORDINATOR_LOAD_IN_PROGRESS for a few seconds; kafkajs marks it retriable.
    const result = await retry(
      async () => {
        // A transactional id is owned by its transaction coordinator; a plain producer id comes from any broker.
        const broker =
          transactionalId === undefined
            ? await this.deps.cluster.findControllerBroker()
            : await this.deps.cluster.findGroupCoordinator({
                groupId: transactionalId,
                coordinatorType: COORDINATOR_TYPES.TRANSACTION
              })
        return broker.initProducerId({
          ...(transactionalId === undefined ? {} : { transactionalId }),
          transactionTimeout: 60000
        })
      },
      {
        ...COORDINATOR_RETRY,
        onRetry: (err) => this.deps.log.debug({ err: errorMessage(err) }, 'InitProducerId failed; retrying')
      }
    )
    this.producerId = BigInt(result.producerId)
    this.producerEpoch = result.producerEpoch
    this.generation++
    for (const queue of this.queues) {
      queue.nextSequence = 0
      queue.sequenceConfirmed = false
    }
  }

  /** A sequence hole: no batch may be sent until a new producer id restarts the sequences (see renew). */
  get stale(): boolean {
    return this.staleId
  }

  /**
   * Fetches the new producer id once nothing is in flight, one InitProducerId at a time (two, each stamping
   * batches, would mix ids). True if batches may be sent now.
   */
  async renew(inFlightRequests: number): Promise<boolean> {
    this.refreshing ??= this.refresh(inFlightRequests).finally(() => {
      this.refreshing = null
    })
    await this.refreshing
    return !this.staleId
  }

  /** How many of the partition's batches may be on the wire at once. */
  inFlightLimit(queue: PartitionQueue): number {
    // Until the broker has acknowledged one batch of this producer id on the partition, it has no sequence to
    // check the next against (it takes any first sequence from a new producer), so one batch goes alone.
    return queue.sequenceConfirmed ? this.maxInFlight : 1
  }

  /**
   * After a failure nothing more of the partition is sent until everything in flight is back; then sending
   * resumes from the first unacknowledged batch, in order. False while the partition must still wait.
   */
  mayResume(queue: PartitionQueue): boolean {
    if (!queue.needsResend) return true
    if (queue.inFlight > 0) return false
    queue.needsResend = false
    return true
  }

  /** Assigns the sequence range at first send, and again only if the producer id changed since. */
  stamp(queue: PartitionQueue, batch: ReadyBatch): void {
    if (batch.stampedGeneration === this.generation) return
    const state: BatchProducerState = this.sequenced
      ? {
          producerId: this.producerId,
          producerEpoch: this.producerEpoch,
          baseSequence: queue.nextSequence,
          transactional: this.transactional
        }
      : NOT_SEQUENCED
    if (this.sequenced) queue.nextSequence = (queue.nextSequence + batch.sealed.recordCount) % 2 ** 31
    stampProducerState(batch.sealed.bytes, state)
    batch.stampedGeneration = this.generation
  }

  acknowledged(queue: PartitionQueue, batch: PendingBatch): void {
    if (batch.stampedGeneration === this.generation) queue.sequenceConfirmed = true
  }

  /** A batch of an idempotent (not transactional) producer failed after being given sequences: they have a hole. */
  failed(batch: PendingBatch): void {
    if (this.config.idempotent && batch.stampedGeneration >= 0) this.staleId = true
  }

  /**
   * A refused batch is replaced in its queue by smaller ones (the sender's split). Its sequence numbers were never
   * written: if no later batch of the partition took sequences after it, the replacements take them over;
   * otherwise a new producer id renumbers every batch not yet acknowledged, in order.
   */
  replaced(queue: PartitionQueue, batch: ReadyBatch): void {
    if (!this.sequenced || batch.stampedGeneration !== this.generation) return
    const later = queue.queue.slice(queue.queue.indexOf(batch) + 1)
    if (later.some((other) => other.stampedGeneration === this.generation)) this.staleId = true
    else queue.nextSequence = batch.sealed.bytes.readInt32BE(BATCH.BASE_SEQUENCE)
  }

  /**
   * The broker refused a batch over its sequence or producer id. True when that is handled here: the caller
   * retries the batch, which goes behind the earlier batch being retried, or under a new producer id.
   */
  sequenceRefused(code: number, queue: PartitionQueue, batch: PendingBatch): boolean {
    if (this.transactional) return false
    if (code === KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && queue.queue[0] !== batch) return true
    if (code !== KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && code !== KafkaErrorCode.UNKNOWN_PRODUCER_ID)
      return false
    this.staleId = true
    return true
  }

  private async refresh(inFlightRequests: number): Promise<void> {
    if (inFlightRequests > 0) return
    try {
      await this.init()
      this.staleId = false
      this.deps.log.info({ producerId: String(this.producerId) }, 'new producer id; sequence numbers restart')
    } catch (err) {
      this.deps.log.warn({ err: errorMessage(err) }, 'cannot obtain a producer id yet; will retry')
      this.deps.retryAfter(this.config.retryBackoffMs)
    }
  }
}
