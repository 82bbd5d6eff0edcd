import type { Admin } from 'kafkajs'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../consumer/partition-reader.js'
import type { KafkajsCluster } from '../../kafka/kafkajs-internals.js'
import type { Logger } from '../../log/logger.js'
import type { SourceRecord } from './rebatch.js'

export interface SourceRead {
  readonly byPartition: Map<number, SourceRecord[]>
  readonly records: number
  /** Key, value and header bytes, counted as the copier counts its --bytes budget. */
  readonly bytes: number
}

/**
 * Reads the source's records, every partition from its start, with its own Fetch requests and no consumer
 * group: Read and Describe on the topic are all it needs. Stops at the end the topic had when the read began,
 * or once `maxRecords` / `maxBytes` is reached (the copy mode's budgets, counted the same way).
 */
export async function readSourceRecords(deps: { cluster: KafkajsCluster; admin: Admin; log: Logger }, topic: string, budget: { maxRecords?: number; maxBytes?: number }, signal?: AbortSignal): Promise<SourceRead> {
  const byPartition = new Map<number, SourceRecord[]>()
  let records = 0
  let bytes = 0
  const enough = new AbortController()
  const stop = (): void => enough.abort()
  signal?.addEventListener('abort', stop, { once: true })
  const full = (): boolean => (budget.maxRecords !== undefined && records >= budget.maxRecords) || (budget.maxBytes !== undefined && bytes >= budget.maxBytes)
  try {
    await new PartitionReader({ ...DEFAULT_READER_CONFIG, topics: [topic] }, deps).run({
      onBatch: ({ partition, batch }) => {
        if (batch.isControl) return
        let list = byPartition.get(partition)
        if (list === undefined) {
          list = []
          byPartition.set(partition, list)
        }
        for (const r of batch.records) {
          if (full()) break
          list.push({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })
          records++
          bytes += (r.key?.length ?? 0) + (r.value?.length ?? 0) + r.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0)
        }
        if (full()) enough.abort()
      },
      onCorruptBatch: ({ error }) => {
        throw error
      }
    }, enough.signal)
  } finally {
    signal?.removeEventListener('abort', stop)
  }
  return { byPartition, records, bytes }
}
