import { Counter, Gauge, type Registry } from './prom-client.js'
import { figureCounters } from './registry.js'

/** What group membership reports: the partitions it now owns, and each rebalance. */
export interface GroupMetricsSink {
  assigned(partitions: ReadonlyArray<{ readonly topic: string; readonly partition: number }>): void
  rebalance(): void
}

/** What the consumer reports per batch and per unreadable record; prom-client objects stay behind this interface. */
export interface ConsumerMetricsSink {
  batchRead(
    topic: string,
    codec: string,
    batch: {
      records: number
      storedBytes: number
      uncompressedBytes: number
      decompressCpuSeconds: number
      decodeCpuSeconds: number
    }
  ): void
  corrupt(topic: string, kind: 'record' | 'batch', code: string): void
  /** Dead-letter copies that could not be written, counted under --on-dead-letter-failure skip. */
  deadLettersSkipped(records: number): void
}

export function createConsumerMetrics(registry: Registry): ConsumerMetricsSink {
  const batchRead = figureCounters(registry, ['topic', 'codec'], {
    records: { name: 'squeeze_records_consumed_total', help: 'Records read and decoded' },
    batches: { name: 'squeeze_batches_consumed_total', help: 'Record batches read' },
    storedBytes: {
      name: 'squeeze_consumed_compressed_bytes_total',
      help: 'Batch bytes fetched, as stored by the broker'
    },
    uncompressedBytes: { name: 'squeeze_consumed_uncompressed_bytes_total', help: 'Batch bytes after decompression' },
    decompressCpuSeconds: {
      name: 'squeeze_decompress_cpu_seconds_total',
      help: 'Process CPU time spent decompressing batches'
    },
    decodeCpuSeconds: {
      name: 'squeeze_decode_cpu_seconds_total',
      help: 'Process CPU time spent walking records and decoding values'
    }
  })
  const corrupt = new Counter({
    name: 'squeeze_corrupt_total',
    help: 'Records or batches that could not be read, counted and skipped',
    labelNames: ['topic', 'kind', 'code'],
    registers: [registry]
  })
  const deadLettersSkipped = new Counter({
    name: 'squeeze_dead_letters_skipped_total',
    help: 'Poison records whose dead-letter copy could not be written (--on-dead-letter-failure skip)',
    registers: [registry]
  })
  return {
    deadLettersSkipped(records) {
      deadLettersSkipped.inc(records)
    },
    batchRead(topic, codec, batch) {
      batchRead({ topic, codec }, { ...batch, batches: 1 })
    },
    corrupt(topic, kind, code) {
      corrupt.inc({ topic, kind, code })
    }
  }
}

/** Lag, assignment and rebalances of a consumer (`--group` members; lag is reported without a group too). */
export interface ConsumerGroupMetrics extends GroupMetricsSink {
  lag(topic: string, partition: number, records: number): void
}

export function createConsumerGroupMetrics(registry: Registry): ConsumerGroupMetrics {
  const lag = new Gauge({
    name: 'squeeze_consumer_lag_records',
    help: 'Records between the read position and the partition end (high watermark, or last stable offset under read_committed), per partition this consumer reads',
    labelNames: ['topic', 'partition'],
    registers: [registry]
  })
  return {
    lag(topic, partition, records) {
      lag.set({ topic, partition: String(partition) }, records)
    },
    ...createGroupGauges(registry, 'consumer', lag)
  }
}

/** squeeze_<service>_assigned_partitions and _rebalances_total; a partition given up leaves `lag`. */
export function createGroupGauges(
  registry: Registry,
  service: 'consumer' | 'copier',
  lag: Gauge<'topic' | 'partition'>
): GroupMetricsSink {
  const assigned = new Gauge({
    name: `squeeze_${service}_assigned_partitions`,
    help: `Partitions the group assigned to this ${service}`,
    labelNames: ['topic'],
    registers: [registry]
  })
  const rebalances = new Counter({
    name: `squeeze_${service}_rebalances_total`,
    help: 'Assignment changes this group member reconciled (or lost, when fenced)',
    registers: [registry]
  })
  let reported: ReadonlyArray<{ readonly topic: string; readonly partition: number }> = []
  return {
    assigned(partitions) {
      // A partition given up leaves the lag gauge: its next owner reports it, and sums over members stay right.
      const now = new Set(partitions.map((tp) => `${tp.topic}:${tp.partition}`))
      for (const tp of reported)
        if (!now.has(`${tp.topic}:${tp.partition}`)) lag.remove({ topic: tp.topic, partition: String(tp.partition) })
      reported = [...partitions]
      assigned.reset()
      for (const tp of partitions) assigned.inc({ topic: tp.topic })
    },
    rebalance() {
      rebalances.inc()
    }
  }
}
