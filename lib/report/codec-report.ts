import type { TopicMeasurement } from '../consumer/measure-topics.js'
import type { ProducerStats } from '../producer/producer.js'
import { formatBytes, formatNumber, renderTable } from './table.js'

/** One codec/level run: what its producer measured and what reading its topic back measured. */
export interface CodecRun {
  readonly label: string
  readonly producer: Readonly<ProducerStats>
  readonly consumer: TopicMeasurement
}

const GIB = 1024 ** 3

/** The side-by-side table: every figure is measured in this run, none assumed. */
export function renderCodecReport(runs: readonly CodecRun[]): string {
  const none = runs.find((r) => r.label === 'none')
  const rows = runs.map(({ label, producer, consumer }) => {
    const stored = consumer.diskBytes ?? consumer.storedBytes
    const uncompressed = producer.uncompressedBytes
    const compressMBps = producer.compressCpuSeconds === 0 ? Number.NaN : uncompressed / 1e6 / producer.compressCpuSeconds
    const noneStored = none === undefined ? undefined : none.consumer.diskBytes ?? none.consumer.storedBytes
    return [
      label,
      String(consumer.records),
      String(producer.batchesAcked),
      formatNumber(producer.batchesAcked === 0 ? Number.NaN : producer.recordsAcked / producer.batchesAcked, 0),
      formatBytes(uncompressed),
      formatBytes(stored),
      `${formatNumber(stored === 0 ? Number.NaN : uncompressed / stored)}x`,
      noneStored === undefined || stored === 0 ? '-' : `${formatNumber(noneStored / stored)}x`,
      formatNumber(uncompressed === 0 ? Number.NaN : producer.compressCpuSeconds / (uncompressed / GIB)),
      label === 'none' ? '-' : formatNumber(compressMBps, 0),
      formatNumber(consumer.uncompressedBytes === 0 ? Number.NaN : consumer.decompressCpuSeconds / (consumer.uncompressedBytes / GIB)),
      formatNumber(consumer.uncompressedBytes === 0 ? Number.NaN : consumer.decodeCpuSeconds / (consumer.uncompressedBytes / GIB)),
      String(producer.recordsFailed + consumer.corruptRecords + consumer.corruptBatches)
    ]
  })
  return renderTable(
    ['codec', 'records', 'batches', 'rec/batch', 'uncompressed', 'stored', 'ratio', 'vs none', 'compress cpu s/GiB', 'compress MB/s/core', 'decompress cpu s/GiB', 'decode cpu s/GiB', 'errors'],
    rows
  )
}
