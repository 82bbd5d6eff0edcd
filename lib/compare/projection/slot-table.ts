import type { BatchSlot } from './project-target.js'

const FIELDS = 6

/**
 * A chunk's batch slots packed into shared memory, six numbers each (timestamps are exact in a double): posted to
 * every projection thread with each of the chunk's tasks, it is shared, not cloned. As an array of objects, a chunk of
 * small batches (16,000 slots for 8 MiB of 500-byte batches) cost about 7 ms to post per task and thread, and more
 * to read on every thread, also for the tasks another thread claims.
 */
export function packSlots(slots: readonly BatchSlot[]): Float64Array {
  const table = new Float64Array(
    new SharedArrayBuffer(Math.max(1, slots.length * FIELDS) * Float64Array.BYTES_PER_ELEMENT),
    0,
    slots.length * FIELDS
  )
  let at = 0
  for (const s of slots) {
    table[at++] = s.partition
    table[at++] = s.start
    table[at++] = s.end
    table[at++] = s.count
    table[at++] = s.firstTimestamp
    table[at++] = s.maxTimestamp
  }
  return table
}

export function unpackSlots(table: Float64Array): BatchSlot[] {
  const slots = new Array<BatchSlot>(table.length / FIELDS)
  for (let i = 0, at = 0; at < table.length; i++, at += FIELDS) {
    slots[i] = {
      partition: table[at] as number,
      start: table[at + 1] as number,
      end: table[at + 2] as number,
      count: table[at + 3] as number,
      firstTimestamp: table[at + 4] as number,
      maxTimestamp: table[at + 5] as number
    }
  }
  return slots
}
