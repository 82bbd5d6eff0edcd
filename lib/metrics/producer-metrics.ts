import { Counter, Gauge, Histogram, type Registry } from './prom-client.js'
import { figureCounters } from './registry.js'

export interface BatchLabels {
  topic: string
  codec: string
  level: string
}

/** A topic's codec, for the adaptive level's figures (the level is the value, or its own label). */
export interface TopicCodecLabels {
  topic: string
  codec: string
}

/** What the producer reports per batch; prom-client objects stay behind this interface. */
export interface ProducerMetrics {
  /** A batch was sealed at `labels.level` for a topic whose level adapts: sets the level gauge, counts the batch. */
  adaptiveBatch(labels: BatchLabels): void
  /** The adaptive level moved, and why (buffer, linger, idle, budget). */
  levelChanged(labels: TopicCodecLabels, direction: 'up' | 'down', reason: string): void
  batchSent(
    labels: BatchLabels,
    batch: {
      records: number
      uncompressedBytes: number
      compressedBytes: number
      compressCpuSeconds: number
      latencySeconds: number
    }
  ): void
  recordsFailed(labels: BatchLabels, records: number, code: string): void
  retried(labels: BatchLabels, code: string): void
  bufferedBytes(bytes: number): void
}

const SIZE_BUCKETS = [1024, 4096, 16384, 65536, 262144, 524288, 1048576, 4194304]
const RECORD_BUCKETS = [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

export function createProducerMetrics(registry: Registry): ProducerMetrics {
  const labelNames = ['topic', 'codec', 'level'] as const
  const batchSent = figureCounters(registry, labelNames, {
    records: { name: 'squeeze_records_produced_total', help: 'Records acknowledged by the broker' },
    uncompressedBytes: {
      name: 'squeeze_produced_uncompressed_bytes_total',
      help: 'Batch bytes before compression (header plus records)'
    },
    compressedBytes: {
      name: 'squeeze_produced_compressed_bytes_total',
      help: 'Batch bytes sent to the broker, after compression'
    },
    batches: { name: 'squeeze_batches_produced_total', help: 'Record batches acknowledged' },
    compressCpuSeconds: {
      name: 'squeeze_compress_cpu_seconds_total',
      help: "CPU time spent compressing batches (each compression thread's own, summed over the pool, or the process's when compressing inline)"
    }
  })
  const recordsPerBatch = new Histogram({
    name: 'squeeze_batch_records',
    help: 'Records per batch sent',
    labelNames,
    buckets: RECORD_BUCKETS,
    registers: [registry]
  })
  const batchBytes = new Histogram({
    name: 'squeeze_batch_compressed_bytes',
    help: 'Compressed size of each batch sent',
    labelNames,
    buckets: SIZE_BUCKETS,
    registers: [registry]
  })
  const latency = new Histogram({
    name: 'squeeze_produce_latency_seconds',
    help: 'Time from a batch closing to its acknowledgement',
    labelNames,
    registers: [registry]
  })
  const failed = new Counter({
    name: 'squeeze_records_failed_total',
    help: 'Records that could not be delivered',
    labelNames: [...labelNames, 'code'],
    registers: [registry]
  })
  const retries = new Counter({
    name: 'squeeze_produce_retries_total',
    help: 'Batches sent again after a retriable error',
    labelNames: [...labelNames, 'code'],
    registers: [registry]
  })
  const level = new Gauge({
    name: 'squeeze_compression_level',
    help: 'Compression level of the latest batch sealed, per topic whose level adapts (codec:adaptive)',
    labelNames: ['topic', 'codec'],
    registers: [registry]
  })
  const atLevel = new Counter({
    name: 'squeeze_compression_level_batches_total',
    help: 'Batches sealed at each level, per topic whose level adapts',
    labelNames,
    registers: [registry]
  })
  const changes = new Counter({
    name: 'squeeze_compression_level_changes_total',
    help: 'Adaptive level decisions: direction up or down, reason buffer, linger, idle or budget',
    labelNames: ['topic', 'codec', 'direction', 'reason'],
    registers: [registry]
  })
  const buffered = new Gauge({
    name: 'squeeze_producer_buffered_bytes',
    help: 'Bytes reserved by batches not yet acknowledged (bounded by buffer.memory)',
    registers: [registry]
  })
  return {
    adaptiveBatch(labels) {
      level.set({ topic: labels.topic, codec: labels.codec }, Number(labels.level))
      atLevel.inc(labels)
    },
    levelChanged(labels, direction, reason) {
      changes.inc({ ...labels, direction, reason })
    },
    batchSent(labels, batch) {
      batchSent(labels, {
        records: batch.records,
        uncompressedBytes: batch.uncompressedBytes,
        compressedBytes: batch.compressedBytes,
        batches: 1,
        compressCpuSeconds: batch.compressCpuSeconds
      })
      recordsPerBatch.observe(labels, batch.records)
      batchBytes.observe(labels, batch.compressedBytes)
      latency.observe(labels, batch.latencySeconds)
    },
    recordsFailed(labels, count, code) {
      failed.inc({ ...labels, code }, count)
    },
    retried(labels, code) {
      retries.inc({ ...labels, code })
    },
    bufferedBytes(bytes) {
      buffered.set(bytes)
    }
  }
}
