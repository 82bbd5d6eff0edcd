import { Worker } from 'node:worker_threads'
import { ErrorCodes, SqueezeError } from '../../errors.js'
import type { ProjectionTask, TargetProjection } from './project-target.js'
import type { ProjectionReply } from './projection-worker.js'

const WORKER_URL = new URL('./projection-worker.js', import.meta.url)

interface Pending {
  readonly task: ProjectionTask
  readonly resolve: (result: TargetProjection) => void
  readonly reject: (err: Error) => void
}

/**
 * Up to `threads` projection threads, started on first use and kept for every batching a run projects (a
 * thread costs tens of ms to start). Each thread takes the next task when it finishes one. A task that throws
 * fails with its target named; a thread that dies fails what it held and is not replaced.
 */
export class ProjectionPool {
  private readonly idle: Worker[] = []
  private readonly busy = new Map<Worker, Pending>()
  private readonly queue: Pending[] = []
  private started = 0

  constructor(private readonly threads: number, private readonly label: (task: ProjectionTask) => string) {}

  /** Every task's result, in task order. */
  run(tasks: readonly ProjectionTask[]): Promise<TargetProjection[]> {
    return Promise.all(tasks.map((task) => new Promise<TargetProjection>((resolve, reject) => {
      this.queue.push({ task, resolve, reject })
      this.dispatch()
    })))
  }

  async close(): Promise<void> {
    const workers = [...this.idle, ...this.busy.keys()]
    this.idle.length = 0
    await Promise.all(workers.map((w) => w.terminate()))
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.started < Math.max(1, this.threads) ? this.startWorker() : undefined)
      if (worker === undefined) return
      const pending = this.queue.shift() as Pending
      this.busy.set(worker, pending)
      worker.postMessage(pending.task)
    }
  }

  private startWorker(): Worker {
    this.started++
    const worker = new Worker(WORKER_URL)
    const fail = (err: Error): void => {
      const pending = this.busy.get(worker)
      this.busy.delete(worker)
      pending?.reject(err)
    }
    worker.on('message', (reply: ProjectionReply) => {
      const pending = this.busy.get(worker)
      this.busy.delete(worker)
      this.idle.push(worker)
      if (pending !== undefined) {
        if ('error' in reply) pending.reject(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `projecting ${this.label(pending.task)} failed: ${reply.error}`))
        else pending.resolve(reply.result)
      }
      this.dispatch()
    })
    worker.on('error', (err) => fail(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread failed: ${err.message}`, { cause: err })))
    worker.on('exit', (code) => {
      if (code !== 0) fail(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread exited with code ${code}`))
    })
    return worker
  }
}
