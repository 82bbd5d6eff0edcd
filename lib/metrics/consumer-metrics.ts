import { Counter, type Registry } from 'prom-client'
import type { ConsumerMetricsSink } from '../consumer/measure-topics.js'

export function createConsumerMetrics(registry: Registry): ConsumerMetricsSink {
  const labelNames = ['topic', 'codec'] as const
  const records = new Counter({ name: 'squeeze_records_consumed_total', help: 'Records read and decoded', labelNames, registers: [registry] })
  const batches = new Counter({ name: 'squeeze_batches_consumed_total', help: 'Record batches read', labelNames, registers: [registry] })
  const stored = new Counter({ name: 'squeeze_consumed_compressed_bytes_total', help: 'Batch bytes fetched, as stored by the broker', labelNames, registers: [registry] })
  const uncompressed = new Counter({ name: 'squeeze_consumed_uncompressed_bytes_total', help: 'Batch bytes after decompression', labelNames, registers: [registry] })
  const decompress = new Counter({ name: 'squeeze_decompress_cpu_seconds_total', help: 'Process CPU time spent decompressing batches', labelNames, registers: [registry] })
  const decode = new Counter({ name: 'squeeze_decode_cpu_seconds_total', help: 'Process CPU time spent walking records and decoding values', labelNames, registers: [registry] })
  const corrupt = new Counter({ name: 'squeeze_corrupt_total', help: 'Records or batches that could not be read, counted and skipped', labelNames: ['topic', 'kind', 'code'], registers: [registry] })
  return {
    batchRead(topic, codec, batch) {
      const labels = { topic, codec }
      records.inc(labels, batch.records)
      batches.inc(labels)
      stored.inc(labels, batch.storedBytes)
      uncompressed.inc(labels, batch.uncompressedBytes)
      decompress.inc(labels, batch.decompressCpuSeconds)
      decode.inc(labels, batch.decodeCpuSeconds)
    },
    corrupt(topic, kind, code) {
      corrupt.inc({ topic, kind, code })
    }
  }
}
