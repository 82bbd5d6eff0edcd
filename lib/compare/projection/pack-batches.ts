import type { BatchSlot } from './project-target.js'
import type { ProjectedBatch } from './rebatch.js'

/** The batches' records copied once into memory every projection thread reads without a copy of its own. */
export function packBatches(batches: readonly ProjectedBatch[]): { data: SharedArrayBuffer; slots: BatchSlot[] } {
  const total = batches.reduce((n, b) => n + b.records.length, 0)
  const data = new SharedArrayBuffer(Math.max(total, 1))
  const view = new Uint8Array(data)
  const slots: BatchSlot[] = []
  let at = 0
  for (const b of batches) {
    view.set(b.records, at)
    slots.push({ partition: b.partition, start: at, end: at + b.records.length, count: b.count, firstTimestamp: b.firstTimestamp, maxTimestamp: b.maxTimestamp })
    at += b.records.length
  }
  return { data, slots }
}

/** Mean wait of each batch's first record before its batch closed. */
export function meanWaitMs(batches: readonly ProjectedBatch[]): number {
  return batches.length === 0 ? 0 : batches.reduce((n, b) => n + b.waitedMs, 0) / batches.length
}
