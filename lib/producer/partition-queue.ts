// One partition's batches, from the open one being filled to the sealed ones awaiting acknowledgement: the
// state the accumulator fills, the sender drains and idempotence stamps.
import type { CodecSpec } from '../codecs/index.js'
import type { RecordBatchBuilder, SealedBatch } from '../protocol/record-batch-builder.js'

export interface PendingBatch {
  readonly records: number
  /** The partition's count of accepted records before this batch's first one. */
  readonly firstIndex: number
  /** The codec and level it is compressed with: an adaptive topic's level varies from batch to batch. */
  readonly spec: CodecSpec
  inFlight: boolean
  /** null while the batch is being compressed. */
  sealed: SealedBatch | null
  readonly closedAt: number
  /** buffer.memory bytes this batch holds: batch.size until sealed, then its compressed size. */
  reserved: number
  attempts: number
  retryAt: number
  /** The producer id generation its sequence numbers belong to; -1 until first sent. */
  stampedGeneration: number
}

export interface ReadyBatch extends PendingBatch {
  sealed: SealedBatch
}

export function isReady(batch: PendingBatch): batch is ReadyBatch {
  return batch.sealed !== null
}

export interface PartitionQueue {
  readonly topic: string
  readonly partition: number
  open: RecordBatchBuilder | null
  lingerTimer: NodeJS.Timeout | null
  /** Closed batches, oldest first: sealing, waiting, in flight or waiting for a retry. */
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

export function newPartitionQueue(topic: string, partition: number): PartitionQueue {
  return {
    topic,
    partition,
    open: null,
    lingerTimer: null,
    queue: [],
    inFlight: 0,
    needsResend: false,
    accepted: 0,
    sequenceConfirmed: false,
    nextSequence: 0
  }
}

export function newPendingBatch(
  records: number,
  firstIndex: number,
  reserved: number,
  closedAt: number,
  spec: CodecSpec
): PendingBatch {
  return {
    records,
    firstIndex,
    spec,
    inFlight: false,
    sealed: null,
    closedAt,
    reserved,
    attempts: 0,
    retryAt: 0,
    stampedGeneration: -1
  }
}

/** Takes `batch` out of its queue; false if it is no longer there (already acknowledged or failed). */
export function removeBatch(queue: PartitionQueue, batch: PendingBatch): boolean {
  // Normally the head; after a timed-out request whose batches did land, a later batch can be answered first.
  if (queue.queue[0] === batch) {
    queue.queue.shift()
    return true
  }
  const at = queue.queue.indexOf(batch)
  if (at === -1) return false
  queue.queue.splice(at, 1)
  return true
}
