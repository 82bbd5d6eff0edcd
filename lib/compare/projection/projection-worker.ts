import { parentPort } from 'node:worker_threads'
import { ChunkProjector, type ChunkProjection, type ProjectionTask } from './project-target.js'

export type ProjectionReply = { readonly result: ChunkProjection } | { readonly error: string }
/** What the pool posts: a task, answered in order, or a finished projection's replay to drop, not answered. */
export type ProjectionMessage = ProjectionTask | { readonly release: string }

// Runs on a projection thread: one chunk of one target at a time, as the pool hands them out.
if (parentPort !== null) {
  const port = parentPort
  const projector = new ChunkProjector()
  port.on('message', (task: ProjectionMessage) => {
    if ('release' in task) {
      projector.release(task.release)
      return
    }
    let reply: ProjectionReply
    try {
      reply = { result: projector.project(task) }
    } catch (err) {
      reply = { error: err instanceof Error ? err.message : String(err) }
    }
    port.postMessage(reply)
  })
}
