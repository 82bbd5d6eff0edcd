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
 * out-of-order timestamp counts as arriving at once.
 */
export function rebatchPartition(partition: number, records: readonly SourceRecord[], settings: BatchingSettings): ProjectedBatch[] {
  const batches: ProjectedBatch[] = []
  let builder: RecordBatchBuilder | null = null
  let openedAt = 0
  let lastAt = 0
  const close = (waitedMs: number): void => {
    if (builder !== null && builder.recordCount > 0) batches.push({ ...builder.finish(), partition, waitedMs })
    builder = null
  }
  const open = (at: number): RecordBatchBuilder => {
    openedAt = at
    lastAt = at
    return new RecordBatchBuilder(settings.batchSizeBytes, Math.min(settings.batchSizeBytes, 64 * 1024))
  }
  for (const record of records) {
    if (builder !== null && record.timestamp - openedAt > settings.lingerMs) close(settings.lingerMs)
    builder ??= open(record.timestamp)
    if (!builder.tryAppend(record, record.timestamp)) {
      close(lastAt - openedAt)
      builder = open(record.timestamp)
      builder.tryAppend(record, record.timestamp)
    }
    lastAt = Math.max(lastAt, record.timestamp)
    if (builder.sizeBytes >= settings.batchSizeBytes) close(lastAt - openedAt)
  }
  // The end of the sample is a flush (as the copier's close): the last batch waited as long as its records span.
  close(lastAt - openedAt)
  return batches
}

/** Every partition's batches, partitions in ascending order. */
export function rebatch(byPartition: ReadonlyMap<number, readonly SourceRecord[]>, settings: BatchingSettings): ProjectedBatch[] {
  return [...byPartition.keys()].sort((a, b) => a - b).flatMap((p) => rebatchPartition(p, byPartition.get(p) ?? [], settings))
}
