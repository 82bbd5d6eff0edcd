import { codecNameForId } from '../codecs/index.js'
import { DEFAULT_READER_CONFIG, PartitionReader, type BatchEvent } from '../consumer/partition-reader.js'
import type { ReadSettings } from '../config/read-properties.js'
import { createCluster, createKafkaClient, type KafkaConnectionConfig } from '../kafka/connection.js'
import type { Logger } from '../log/logger.js'
import type { ReadBatch } from '../protocol/record-batch-reader.js'

/** One stored batch of the source, as its producer wrote it: only the header figures the baseline needs. */
export interface SourceBatch {
  readonly partition: number
  /** From the batch attributes; control batches (transaction markers) count as stored bytes, not as a codec. */
  readonly codec: string | null
  readonly records: number
  /** The whole batch as the broker stores it (log overhead included): summed, exactly the log's size. */
  readonly storedBytes: number
  readonly uncompressedBytes: number
  readonly decompressCpuSeconds: number
}

export interface SourceBatchScan {
  readonly batches: readonly SourceBatch[]
  /** Batches that did not read (CRC, framing): left out of the baseline, and counted so the report can say so. */
  readonly corruptBatches: number
}

/** The baseline's figures of one stored batch. */
export function sourceBatch(partition: number, batch: ReadBatch): SourceBatch {
  return {
    partition,
    codec: batch.isControl ? null : (codecNameForId(batch.codecId) ?? `id${batch.codecId}`),
    records: batch.isControl ? 0 : batch.recordCount,
    storedBytes: batch.storedBytes,
    uncompressedBytes: batch.uncompressedBytes,
    decompressCpuSeconds: batch.decompressCpuSeconds
  }
}

/**
 * Reads the source's stored batches from each partition's start up to `until` (a partition's next offset
 * compare did not read; absent partitions are read to their end), counting every batch that holds an offset
 * in range. read_uncommitted: aborted batches and markers are on disk too, and the baseline is what is stored.
 */
export async function scanSourceBatches(
  connection: KafkaConnectionConfig,
  topic: string,
  until: ReadonlyMap<number, number> | undefined,
  log: Logger,
  read: ReadSettings = {}
): Promise<SourceBatchScan> {
  const cluster = createCluster(connection, log)
  const admin = createKafkaClient(connection, log).admin()
  await Promise.all([cluster.connect(), admin.connect()])
  const batches: SourceBatch[] = []
  let corruptBatches = 0
  const reached = new Map<number, number>()
  const stop = new AbortController()
  const ends = await admin.fetchTopicOffsets(topic)
  const limit = (partition: number): number =>
    until?.get(partition) ?? Number(ends.find((e) => e.partition === partition)?.high ?? 0)
  const done = (): boolean => ends.every((e) => (reached.get(e.partition) ?? Number(e.low)) >= limit(e.partition))
  try {
    if (done()) return { batches, corruptBatches }
    await new PartitionReader(
      { ...DEFAULT_READER_CONFIG, topics: [topic], isolation: 'read_uncommitted', reuseBatchMemory: true, ...read },
      { cluster, admin, log }
    ).run(
      {
        onBatch: ({ partition, batch }: BatchEvent) => {
          if (batch.baseOffset >= limit(partition)) return
          batches.push(sourceBatch(partition, batch))
          reached.set(partition, batch.lastOffset + 1)
          // A live topic keeps growing past what compare read: stop once every partition is covered.
          if (done()) stop.abort()
        },
        onCorruptBatch: ({ partition, lastOffset }) => {
          corruptBatches++
          reached.set(partition, lastOffset + 1)
        }
      },
      stop.signal
    )
    return { batches, corruptBatches }
  } finally {
    await Promise.all([cluster.disconnect(), admin.disconnect()]).catch(() => undefined)
  }
}
