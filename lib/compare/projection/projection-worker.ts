import { parentPort } from 'node:worker_threads'
import { ChunkProjector, type ChunkProjection, type ProjectionTask } from './project-target.js'

export type ProjectionReply = { readonly result: ChunkProjection } | { readonly error: string }

// Runs on a projection thread: one chunk of one target at a time, as the pool hands them out.
if (parentPort !== null) {
  const port = parentPort
  const projector = new ChunkProjector()
  port.on('message', (task: ProjectionTask) => {
    let reply: ProjectionReply
    try {
      reply = { result: projector.project(task) }
    } catch (err) {
      reply = { error: err instanceof Error ? err.message : String(err) }
    }
    port.postMessage(reply)
  })
}
