import { parentPort, workerData } from 'node:worker_threads'
import { ChunkProjector, type ChunkProjection, type ProjectionTask } from './project-target.js'
import { unpackSlots } from './slot-table.js'

export type ProjectionReply = { readonly id: number } & (
  { readonly result: ChunkProjection } | { readonly error: string }
)
/**
 * What the pool posts: a task (slot -1: for this thread alone; else claimed by the first thread to swap its id in
 * the slot for its own mark, and skipped by the rest), or a finished projection's replay to drop, not answered.
 */
export type ProjectionMessage =
  { readonly id: number; readonly slot: number; readonly task: PostedTask } | { readonly release: string }
/** A task as posted: its batch slots packed in shared memory (slot-table.ts). */
export type PostedTask = Omit<ProjectionTask, 'slots'> & { readonly slotTable: Float64Array }
export interface ProjectionWorkerData {
  readonly claims: Int32Array
  readonly index: number
}

// Runs on a projection thread: one chunk of one target at a time, as the pool hands them out.
if (parentPort !== null) {
  const port = parentPort
  const { claims, index } = workerData as ProjectionWorkerData
  const projector = new ChunkProjector()
  port.on('message', (message: ProjectionMessage) => {
    if ('release' in message) {
      projector.release(message.release)
      return
    }
    const {
      id,
      slot,
      task: { slotTable, ...task }
    } = message
    if (slot >= 0 && Atomics.compareExchange(claims, slot, id, -1 - index) !== id) return
    let reply: ProjectionReply
    try {
      reply = { id, result: projector.project({ ...task, slots: unpackSlots(slotTable) }) }
    } catch (err) {
      reply = { id, error: err instanceof Error ? err.message : String(err) }
    }
    port.postMessage(reply)
  })
}
