import { parentPort } from 'node:worker_threads'
import { projectTarget, type ProjectionTask, type TargetProjection } from './project-target.js'

export type ProjectionReply = { readonly result: TargetProjection } | { readonly error: string }

// Runs on a projection thread: one target at a time, as the pool hands them out.
if (parentPort !== null) {
  const port = parentPort
  port.on('message', (task: ProjectionTask) => {
    let reply: ProjectionReply
    try {
      reply = { result: projectTarget(task) }
    } catch (err) {
      reply = { error: err instanceof Error ? err.message : String(err) }
    }
    port.postMessage(reply)
  })
}
