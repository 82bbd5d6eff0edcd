import type { Admin } from 'kafkajs'
import { DEFAULT_READER_CONFIG, PartitionReader, type BatchEvent } from '../../consumer/partition-reader.js'
import type { KafkajsCluster } from '../../kafka/kafkajs-internals.js'
import type { ReadSettings } from '../../config/read-properties.js'
import type { Logger } from '../../log/logger.js'
import { threadCpuSeconds } from '../../metrics/thread-cpu.js'
import { sourceBatch, type SourceBatch } from '../source-batches.js'
import type { SourceRecord } from './rebatch.js'

export interface SourceRead {
  readonly records: number
  /** Key, value and header bytes, counted as the copier counts its --bytes budget. */
  readonly bytes: number
  /** Stored batches that could not be read (over the decompression cap, corrupt), counted and left out. */
  readonly skippedBatches: number
}

/** The clients a source read goes through, and the read settings it honours (squeeze.max.batch.uncompressed.bytes). */
export interface SourceReadDeps {
  readonly cluster: KafkajsCluster
  readonly admin: Admin
  readonly log: Logger
  readonly read?: ReadSettings
  /** Record bytes as a sample's windows read them, fetch by fetch. */
  readonly onBytesRead?: (bytes: number) => void
  /** Stops a sample's read at its next fetch, which then rejects with a RUN_CUT error. */
  readonly cut?: AbortSignal
}

export interface SourceReadHandlers {
  /** Each record, in its partition's offset order. */
  onRecord(partition: number, record: SourceRecord): void
  /** Every stored batch in the range read, aborted transactions and their markers included: the baseline's input. */
  onStoredBatch?(batch: SourceBatch): void
  /** Awaited between fetch rounds: a consumer of the records that falls behind holds the read here. */
  betweenRounds?(): Promise<void>
}

/**
 * Reads the source's records, every partition from its start, with its own Fetch requests and no consumer
 * group: Read and Describe on the topic are all it needs. Stops at the end the topic had when the read began,
 * or once `maxRecords` / `maxBytes` is reached (the copy mode's budgets, counted the same way). One pass gives
 * both the records and the stored batches they sit in. With `transient`, a record's bytes are valid only during
 * onRecord (the read decompresses every batch into one reused buffer).
 */
export async function readSource(
  deps: SourceReadDeps,
  topic: string,
  budget: { maxRecords?: number; maxBytes?: number },
  handlers: SourceReadHandlers,
  options: { transient: boolean; signal?: AbortSignal | undefined }
): Promise<SourceRead> {
  let records = 0
  let bytes = 0
  let skippedBatches = 0
  const enough = new AbortController()
  const stop = (): void => enough.abort()
  options.signal?.addEventListener('abort', stop, { once: true })
  const full = (): boolean =>
    (budget.maxRecords !== undefined && records >= budget.maxRecords) ||
    (budget.maxBytes !== undefined && bytes >= budget.maxBytes)
  try {
    const config = {
      ...DEFAULT_READER_CONFIG,
      topics: [topic],
      reuseBatchMemory: options.transient,
      cpuSeconds: threadCpuSeconds,
      ...deps.read
    }
    const reader = new PartitionReader(config, deps)
    await reader.run(
      {
        onBatch: ({ partition, batch }) => {
          if (batch.isControl) return
          for (const r of batch.records) {
            if (full()) break
            handlers.onRecord(partition, r)
            records++
            bytes +=
              (r.key?.length ?? 0) +
              (r.value?.length ?? 0) +
              r.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0)
          }
          if (full()) enough.abort()
        },
        onCorruptBatch: ({ error, reason }) => {
          skippedBatches++
          deps.log.warn({ topic, reason, code: error.code }, `source batch left out: ${error.message}`)
        },
        ...(handlers.onStoredBatch === undefined
          ? {}
          : {
              onStoredBatch: ({ partition, batch }: BatchEvent) =>
                handlers.onStoredBatch?.(sourceBatch(partition, batch))
            }),
        ...(handlers.betweenRounds === undefined ? {} : { betweenRounds: handlers.betweenRounds })
      },
      enough.signal
    )
  } finally {
    options.signal?.removeEventListener('abort', stop)
  }
  return { records, bytes, skippedBatches }
}

/** Every record read, by partition, kept (not transient): for callers that re-batch the whole read more than once. */
export async function readSourceRecords(
  deps: SourceReadDeps,
  topic: string,
  budget: { maxRecords?: number; maxBytes?: number },
  signal?: AbortSignal
): Promise<SourceRead & { byPartition: Map<number, SourceRecord[]> }> {
  const collected = collectByPartition()
  const read = await readSource(deps, topic, budget, { onRecord: collected.add }, { transient: false, signal })
  return { ...read, byPartition: collected.byPartition }
}

/** Records kept by partition, each partition's in the order added. */
export function collectByPartition(): {
  readonly byPartition: Map<number, SourceRecord[]>
  add(partition: number, record: SourceRecord): void
} {
  const byPartition = new Map<number, SourceRecord[]>()
  return {
    byPartition,
    add: (partition, record) => {
      const list = byPartition.get(partition)
      if (list === undefined) byPartition.set(partition, [record])
      else list.push(record)
    }
  }
}
