import { Counter, type Registry } from 'prom-client'
import { figureCounters } from './registry.js'

/** What the consumer reports per batch and per unreadable record; prom-client objects stay behind this interface. */
export interface ConsumerMetricsSink {
  batchRead(topic: string, codec: string, batch: { records: number; storedBytes: number; uncompressedBytes: number; decompressCpuSeconds: number; decodeCpuSeconds: number }): void
  corrupt(topic: string, kind: 'record' | 'batch', code: string): void
}

export function createConsumerMetrics(registry: Registry): ConsumerMetricsSink {
  const batchRead = figureCounters(registry, ['topic', 'codec'], {
    records: { name: 'squeeze_records_consumed_total', help: 'Records read and decoded' },
    batches: { name: 'squeeze_batches_consumed_total', help: 'Record batches read' },
    storedBytes: { name: 'squeeze_consumed_compressed_bytes_total', help: 'Batch bytes fetched, as stored by the broker' },
    uncompressedBytes: { name: 'squeeze_consumed_uncompressed_bytes_total', help: 'Batch bytes after decompression' },
    decompressCpuSeconds: { name: 'squeeze_decompress_cpu_seconds_total', help: 'Process CPU time spent decompressing batches' },
    decodeCpuSeconds: { name: 'squeeze_decode_cpu_seconds_total', help: 'Process CPU time spent walking records and decoding values' }
  })
  const corrupt = new Counter({ name: 'squeeze_corrupt_total', help: 'Records or batches that could not be read, counted and skipped', labelNames: ['topic', 'kind', 'code'], registers: [registry] })
  return {
    batchRead(topic, codec, batch) {
      batchRead({ topic, codec }, { ...batch, batches: 1 })
    },
    corrupt(topic, kind, code) {
      corrupt.inc({ topic, kind, code })
    }
  }
}
