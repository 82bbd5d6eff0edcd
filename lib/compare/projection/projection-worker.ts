import { parentPort } from 'node:worker_threads'
import { projectTarget, type ProjectionTask, type TargetProjection } from './project-target.js'

export type ProjectionReply = { readonly id: number; readonly result: TargetProjection } | { readonly id: number; readonly error: string }

// Runs on a projection thread: one target at a time, as the pool hands them out.
if (parentPort !== null) {
  const port = parentPort
  port.on('message', ({ id, task }: { id: number; task: ProjectionTask }) => {
    let reply: ProjectionReply
    try {
      reply = { id, result: projectTarget(task) }
    } catch (err) {
      reply = { id, error: err instanceof Error ? err.message : String(err) }
    }
    port.postMessage(reply)
  })
}
