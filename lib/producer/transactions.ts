// Transactions: a transactional producer's records (and consumer offsets) become visible together, or never.
import { ErrorCodes, SqueezeError, isTransient } from '../errors.js'
import { KafkaErrorCode } from '../kafka/error-codes.js'
import { nestByTopic } from '../kafka/group-by-topic.js'
import { COORDINATOR_TYPES, type KafkajsBroker, type KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { commitRefused } from '../kafka/offset-commit.js'
import { txnOffsetCommitRequest, type GroupMemberIdentity } from '../kafka/txn-offset-commit.js'
import { retry, type RetryOptions } from '../retry.js'

/**
 * Transaction coordinator calls retry until a deadline, not a count: when the coordinator's node dies, its
 * __transaction_state partition has no reachable leader until the controller fences the node, elects another
 * and that one loads the state, which took longer than ten quick retries on a busy 3-node cluster. 60 s is
 * Kafka's default transaction.timeout.ms (and the Java producer's max.block.ms for commit).
 */
export const TRANSACTION_COORDINATOR_RETRY: RetryOptions = {
  deadlineMs: 60_000,
  initialDelayMs: 100,
  maxDelayMs: 2000,
  shouldRetry: isTransient
}

/** The producer id and epoch the transaction coordinator knows this producer by. */
export interface TransactionIdentity {
  readonly producerId: bigint
  readonly producerEpoch: number
}

export interface TopicPartition {
  readonly topic: string
  readonly partition: number
}

/**
 * The transaction coordinator's side of a transaction: AddPartitionsToTxn before a partition's first batch,
 * AddOffsetsToTxn and TxnOffsetCommit for consumer offsets, EndTxn to commit or abort. A batch that fails inside
 * a transaction fails the whole transaction: commit() aborts it and throws that batch's error.
 */
export class Transactions {
  private open = false
  private error: SqueezeError | null = null
  private offsetsGroupAdded = false
  private readonly partitions = new Set<string>()

  constructor(
    readonly transactionalId: string,
    private readonly cluster: KafkajsCluster,
    private readonly identity: TransactionIdentity,
    private readonly coordinatorRetry: RetryOptions = TRANSACTION_COORDINATOR_RETRY
  ) {}

  get isOpen(): boolean {
    return this.open
  }

  begin(): void {
    if (this.open) throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'a transaction is already open')
    this.open = true
    this.error = null
    this.partitions.clear()
    this.offsetsGroupAdded = false
  }

  /**
   * Adds the offsets to the transaction (TxnOffsetCommit v3). With `member`, the group coordinator checks it is
   * still the member that owns them (KIP-447): a member fenced or gone since fails with SQUEEZE_ERR_GROUP_FENCED,
   * and the transaction must be aborted.
   */
  async sendOffsets(
    groupId: string,
    offsets: ReadonlyArray<{ topic: string; partition: number; offset: number }>,
    member?: GroupMemberIdentity
  ): Promise<void> {
    this.requireOpen()
    const { transactionalId } = this
    const ids = this.ids()
    if (!this.offsetsGroupAdded) {
      // Right after EndTxn the coordinator may still be completing the previous transaction and answers
      // CONCURRENT_TRANSACTIONS (retriable), as Kafka's Java producer also retries.
      await retry(async () => {
        const coordinator = await this.coordinator()
        await coordinator.addOffsetsToTxn({ transactionalId, ...ids, groupId })
      }, this.coordinatorRetry)
      this.offsetsGroupAdded = true
    }
    const { producerId, producerEpoch } = this.identity
    const call = txnOffsetCommitRequest({
      transactionalId,
      groupId,
      producerId,
      producerEpoch,
      offsets,
      ...(member === undefined ? {} : { member })
    })
    await retry(async () => {
      const groupCoordinator = await this.cluster.findGroupCoordinator({
        groupId,
        coordinatorType: COORDINATOR_TYPES.GROUP
      })
      const refused = (await groupCoordinator.connectionPool.send(call)).filter(
        (p) => p.errorCode !== KafkaErrorCode.NONE
      )
      if (refused.length > 0) throw commitRefused(refused, 'transactional offset commit')
    }, this.coordinatorRetry)
  }

  /** Sends everything (`flush`), then commits; if any batch of the transaction failed, aborts instead and throws. */
  async commit(flush: () => Promise<void>): Promise<void> {
    this.requireOpen()
    await flush()
    if (this.error !== null) {
      await this.end(false)
      throw this.error
    }
    await this.end(true)
  }

  async abort(flush: () => Promise<void>): Promise<void> {
    this.requireOpen()
    await flush()
    await this.end(false)
  }

  /** AddPartitionsToTxn for partitions this transaction has not written to yet; must precede their first batch. */
  async addPartitions(entries: ReadonlyArray<{ queue: TopicPartition }>): Promise<void> {
    const fresh = entries.filter(({ queue }) => !this.partitions.has(partitionKey(queue)))
    if (fresh.length === 0) return
    const topics = nestByTopic(
      fresh.map(({ queue }) => queue),
      (queue) => queue.partition
    )
    // Shorter waits than other coordinator calls: the batches of this request are held until it succeeds.
    await retry(
      async () => {
        const coordinator = await this.coordinator()
        await coordinator.addPartitionsToTxn({ transactionalId: this.transactionalId, ...this.ids(), topics })
      },
      {
        ...this.coordinatorRetry,
        initialDelayMs: Math.min(50, this.coordinatorRetry.initialDelayMs),
        maxDelayMs: Math.min(1000, this.coordinatorRetry.maxDelayMs)
      }
    )
    for (const { queue } of fresh) this.partitions.add(partitionKey(queue))
  }

  /** A batch sent in this transaction failed: the transaction cannot commit. */
  batchFailed(error: SqueezeError): void {
    this.error ??= error
  }

  private async end(commit: boolean): Promise<void> {
    const ids = this.ids()
    // A transaction that wrote nothing was never opened on the coordinator; EndTxn would be INVALID_TXN_STATE.
    if (this.partitions.size === 0 && !this.offsetsGroupAdded) {
      this.open = false
      return
    }
    try {
      await retry(async () => {
        const coordinator = await this.coordinator()
        await coordinator.endTxn({ transactionalId: this.transactionalId, ...ids, transactionResult: commit })
      }, this.coordinatorRetry)
    } finally {
      this.open = false
      this.partitions.clear()
    }
  }

  private requireOpen(): void {
    if (!this.open)
      throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'no open transaction: call beginTransaction() first')
  }

  private coordinator(): Promise<KafkajsBroker> {
    return this.cluster.findGroupCoordinator({
      groupId: this.transactionalId,
      coordinatorType: COORDINATOR_TYPES.TRANSACTION
    })
  }

  private ids(): { producerId: string; producerEpoch: number } {
    return { producerId: String(this.identity.producerId), producerEpoch: this.identity.producerEpoch }
  }
}

function partitionKey(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`
}
