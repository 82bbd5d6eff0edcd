import { Counter, Gauge, type Registry } from './prom-client.js'
import { createGroupGauges, type GroupMetricsSink } from './consumer-metrics.js'

/** Source-side figures; assignment and rebalances as a group member (the consumer's, under squeeze_copier_). */
export interface CopierMetrics extends GroupMetricsSink {
  sourceRecords(topic: string, records: number): void
  lag(topic: string, partition: number, records: number): void
  recordsRefused(destination: string, code: string, records: number): void
}

/** Per-target figures come from the copier's producer metrics (labelled by destination topic, codec, level). */
export function createCopierMetrics(registry: Registry): CopierMetrics {
  const records = new Counter({
    name: 'squeeze_copier_source_records_total',
    help: 'Source records copied to every target',
    labelNames: ['topic'],
    registers: [registry]
  })
  const lag = new Gauge({
    name: 'squeeze_copier_lag_records',
    help: 'Source records not yet copied (last stable offset minus position), per partition this copier owns',
    labelNames: ['topic', 'partition'],
    registers: [registry]
  })
  const refused = new Counter({
    name: 'squeeze_copier_records_refused_total',
    help: 'Copies a destination refused (too large for it, invalid), skipped or dead-lettered',
    labelNames: ['destination', 'code'],
    registers: [registry]
  })
  return {
    sourceRecords: (topic, n) => records.inc({ topic }, n),
    lag: (topic, partition, n) => lag.set({ topic, partition: String(partition) }, n),
    recordsRefused: (destination, code, n) => refused.inc({ destination, code }, n),
    ...createGroupGauges(registry, 'copier', lag)
  }
}
