import { Counter, type Registry } from './prom-client.js'

/** Why a fetched batch was skipped: a label value of squeeze_batches_skipped_total. */
export type BatchSkipReason = 'uncompressed_limit' | 'framing' | 'corrupt'

/** What any partition reader reports beside its records: batches it skipped, and offsets retention took away. */
export interface ReaderMetricsSink {
  batchSkipped(topic: string, reason: BatchSkipReason): void
  offsetReset(topic: string, partition: number, gapRecords: number): void
}

export function createReaderMetrics(registry: Registry): ReaderMetricsSink {
  const skipped = new Counter({
    name: 'squeeze_batches_skipped_total',
    help: 'Fetched batches that could not be read (over the decompression cap, corrupt framing or contents), skipped',
    labelNames: ['topic', 'reason'],
    registers: [registry]
  })
  const gap = new Counter({
    name: 'squeeze_offset_reset_gap_records_total',
    help: 'Records between a read position and the log start it moved to: deleted (retention) before they were read',
    labelNames: ['topic', 'partition'],
    registers: [registry]
  })
  return {
    batchSkipped: (topic, reason) => skipped.inc({ topic, reason }),
    offsetReset: (topic, partition, gapRecords) => gap.inc({ topic, partition: String(partition) }, gapRecords)
  }
}
