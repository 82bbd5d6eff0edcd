import { Worker } from 'node:worker_threads'
import { ErrorCodes, SqueezeError } from '../../errors.js'
import type { ProjectionTask, TargetProjection } from './project-target.js'
import type { ProjectionReply } from './projection-worker.js'

const WORKER_URL = new URL('./projection-worker.js', import.meta.url)

/**
 * Runs projection tasks on up to `threads` worker threads, each taking the next task when it finishes one,
 * and returns the results in task order. A task that throws fails the run with its target named; a thread that
 * dies does too. Every thread is ended before this returns.
 */
export async function runProjectionTasks(tasks: readonly ProjectionTask[], threads: number, label: (task: ProjectionTask) => string): Promise<TargetProjection[]> {
  const results: TargetProjection[] = new Array<TargetProjection>(tasks.length)
  let next = 0
  const workers: Worker[] = []
  const runOne = (worker: Worker): Promise<void> => new Promise((resolve, reject) => {
    const take = (): void => {
      const id = next++
      const task = tasks[id]
      if (task === undefined) {
        resolve()
        return
      }
      worker.postMessage({ id, task })
    }
    worker.on('message', (reply: ProjectionReply) => {
      const task = tasks[reply.id] as ProjectionTask
      if ('error' in reply) {
        reject(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `projecting ${label(task)} failed: ${reply.error}`))
        return
      }
      results[reply.id] = reply.result
      take()
    })
    worker.on('error', (err) => reject(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread failed: ${err.message}`, { cause: err })))
    worker.on('exit', (code) => {
      if (code !== 0) reject(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread exited with code ${code}`))
    })
    take()
  })
  try {
    const count = Math.max(1, Math.min(threads, tasks.length))
    for (let i = 0; i < count; i++) workers.push(new Worker(WORKER_URL))
    await Promise.all(workers.map(runOne))
  } finally {
    await Promise.all(workers.map((w) => w.terminate()))
  }
  return results
}
