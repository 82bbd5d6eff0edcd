import { BATCH } from '../../protocol/batch-layout.js'
import { RecordBatchBuilder, type OpenBatch } from '../../protocol/record-batch-builder.js'
import type { RecordHeader } from '../../protocol/record.js'

/** One source record as the projection keeps it: what the copier would send, in the partition it came from. */
export interface SourceRecord {
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: readonly RecordHeader[]
  readonly timestamp: number
}

export interface BatchingSettings {
  readonly lingerMs: number
  /** batch.size, applied (as squeeze's producer does) to the uncompressed batch, header included. */
  readonly batchSizeBytes: number
}

/** An uncompressed batch as the producer would have closed it, and how long its first record waited. */
export interface ProjectedBatch extends OpenBatch {
  readonly partition: number
  readonly waitedMs: number
}

/**
 * Re-batches one partition's records as squeeze's producer batches them, with the records' own timestamps as
 * the clock: a batch opens at its first record, linger.ms after that its timer closes it, and it closes at once
 * when batch.size (uncompressed) is reached or the next record does not fit. The same RecordBatchBuilder the
 * producer fills writes the records, so each batch's bytes are those the producer would compress. An
 * out-of-order timestamp counts as arriving at once. Records come one at a time, so a topic is re-batched as it
 * is read, without holding it.
 */
export class PartitionRebatcher {
  private builder: RecordBatchBuilder | null = null
  private openedAt = 0
  private lastAt = 0
  /** With `reuse`: the one buffer every batch of this partition is written into. */
  private reusable: Buffer | null = null

  /**
   * With `reuse`, emit must copy a batch's records before it returns: the next batch is written over them, so
   * the partition needs one batch.size buffer, not a fresh one (and its page faults) per batch.
   */
  constructor(
    private readonly partition: number,
    private readonly settings: BatchingSettings,
    private readonly emit: (batch: ProjectedBatch) => void,
    options: { readonly reuse?: boolean } = {}
  ) {
    if (options.reuse === true)
      this.reusable = Buffer.allocUnsafe(Math.max(settings.batchSizeBytes, BATCH.HEADER_BYTES + 1))
  }

  add(record: SourceRecord): void {
    const { lingerMs, batchSizeBytes } = this.settings
    if (this.builder !== null && record.timestamp - this.openedAt > lingerMs) this.close(lingerMs)
    let builder = this.builder ?? this.open(record.timestamp)
    if (!builder.tryAppend(record, record.timestamp)) {
      this.close(this.lastAt - this.openedAt)
      builder = this.open(record.timestamp)
      builder.tryAppend(record, record.timestamp)
    }
    this.lastAt = Math.max(this.lastAt, record.timestamp)
    if (builder.sizeBytes >= batchSizeBytes) this.close(this.lastAt - this.openedAt)
  }

  /** The end of the records is a flush (as the copier's close): the last batch waited as long as its records span. */
  flush(): void {
    this.close(this.lastAt - this.openedAt)
  }

  private open(at: number): RecordBatchBuilder {
    this.openedAt = at
    this.lastAt = at
    const reusable = this.reusable
    // A lone record larger than batch.size grows its batch past the reused buffer, into one of its own.
    this.builder =
      reusable === null
        ? new RecordBatchBuilder(this.settings.batchSizeBytes, Math.min(this.settings.batchSizeBytes, 64 * 1024))
        : new RecordBatchBuilder(this.settings.batchSizeBytes, this.settings.batchSizeBytes, (size) =>
            size <= reusable.length ? reusable.subarray(0, size) : Buffer.allocUnsafe(size)
          )
    return this.builder
  }

  private close(waitedMs: number): void {
    const builder = this.builder
    this.builder = null
    if (builder !== null && builder.recordCount > 0)
      this.emit({ ...builder.finish(), partition: this.partition, waitedMs })
  }
}

/** One partition's records re-batched at once (see PartitionRebatcher). */
export function rebatchPartition(
  partition: number,
  records: readonly SourceRecord[],
  settings: BatchingSettings
): ProjectedBatch[] {
  const batches: ProjectedBatch[] = []
  const rebatcher = new PartitionRebatcher(partition, settings, (b) => batches.push(b))
  for (const record of records) rebatcher.add(record)
  rebatcher.flush()
  return batches
}

/** Every partition's batches, partitions in ascending order. */
export function rebatch(
  byPartition: ReadonlyMap<number, readonly SourceRecord[]>,
  settings: BatchingSettings
): ProjectedBatch[] {
  return [...byPartition.keys()]
    .sort((a, b) => a - b)
    .flatMap((p) => rebatchPartition(p, byPartition.get(p) ?? [], settings))
}

/**
 * One reusing PartitionRebatcher per partition, made as a partition's first record arrives: a topic re-batched as
 * it is read. flush() closes every partition's open batch, in partition order.
 */
export class TopicRebatcher {
  private readonly rebatchers = new Map<number, PartitionRebatcher>()

  constructor(
    private readonly settings: BatchingSettings,
    private readonly emit: (batch: ProjectedBatch) => void
  ) {}

  add(partition: number, record: SourceRecord): void {
    let rebatcher = this.rebatchers.get(partition)
    if (rebatcher === undefined) {
      rebatcher = new PartitionRebatcher(partition, this.settings, this.emit, { reuse: true })
      this.rebatchers.set(partition, rebatcher)
    }
    rebatcher.add(record)
  }

  flush(): void {
    for (const partition of [...this.rebatchers.keys()].sort((a, b) => a - b)) this.rebatchers.get(partition)?.flush()
  }
}
