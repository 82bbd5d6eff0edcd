import type { AbortedTransaction } from '../kafka/fetch-request.js'

/** What read_committed filtering needs from a batch's header. */
export interface TransactionalBatchHeader {
  readonly isTransactional: boolean
  readonly isControl: boolean
  /** A control batch that ends its producer's transaction with an abort (not a commit). */
  readonly isAbortMarker: boolean
  readonly producerId: bigint
  readonly lastOffset: number
}

/**
 * read_committed filtering of one fetch answer, as Java's consumer does it (CompletedFetch): the answer's
 * aborted transactions are taken in first-offset order; a producer counts as aborting from the first batch
 * that reaches its transaction's first offset until its abort marker. One producer can abort several times
 * within one answer (a copier restarted with the same transactional id does), so each abort is its own entry,
 * never one per producer id. Each answer gets its own instance: the broker lists every aborted transaction
 * that overlaps the fetched range, including one that began before it.
 */
export class AbortedTransactions {
  private readonly pending: AbortedTransaction[]
  private next = 0
  private readonly aborting = new Set<bigint>()

  constructor(aborted: readonly AbortedTransaction[]) {
    this.pending = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset)
  }

  /** Whether the batch belongs to an aborted transaction (its abort marker included). Call for each batch in offset order. */
  skips(batch: TransactionalBatchHeader): boolean {
    if (!batch.isTransactional) return false
    for (
      let entry = this.pending[this.next];
      entry !== undefined && entry.firstOffset <= batch.lastOffset;
      entry = this.pending[++this.next]
    ) {
      this.aborting.add(entry.producerId)
    }
    if (batch.isAbortMarker) return this.aborting.delete(batch.producerId)
    return this.aborting.has(batch.producerId)
  }
}
