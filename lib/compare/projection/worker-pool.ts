import { Worker } from 'node:worker_threads'
import { ErrorCodes, SqueezeError } from '../../errors.js'
import type { ChunkProjection, ProjectionTask } from './project-target.js'
import type { ProjectionMessage, ProjectionReply } from './projection-worker.js'

const WORKER_URL = new URL('./projection-worker.js', import.meta.url)

interface Pending {
  readonly task: ProjectionTask
  readonly cost: number
  readonly resolve: (result: ChunkProjection) => void
  readonly reject: (err: Error) => void
}

interface Thread {
  readonly worker: Worker
  /** Tasks posted to the thread and not answered yet, in the order it answers them. */
  readonly pending: Pending[]
  /** Their estimated cost. */
  load: number
}

/**
 * Up to `threads` projection threads, started on first use (or by start()) and kept for every chunk and batching
 * a run projects (a thread costs tens of ms to start). A task is posted to a thread as soon as it is given, to
 * the one with the least estimated work queued, so a thread goes from one task to its next without waiting for
 * this thread's event loop (busy re-batching the source). A task that throws fails with its target named; a
 * thread that dies fails what it held.
 */
export class ProjectionPool {
  private readonly running: Thread[] = []
  /** The thread each adaptive replay runs on: its state stays there, and its chunks arrive in order. */
  private readonly replayThreads = new Map<string, Thread>()

  constructor(private readonly threads: number, private readonly label: (task: ProjectionTask) => string) {}

  /** Starts every thread now, so that loading their modules overlaps the caller's own start. */
  start(): void {
    while (this.running.length < Math.max(1, this.threads)) this.startThread()
  }

  /** Every task's result, in task order. `cost` estimates a task's work (any unit), for spreading tasks over threads. */
  run(tasks: readonly ProjectionTask[], cost: (task: ProjectionTask) => number = () => 1): Promise<ChunkProjection[]> {
    return Promise.all(tasks.map((task) => new Promise<ChunkProjection>((resolve, reject) => {
      const key = task.adaptive?.replayKey
      let thread = key === undefined ? undefined : this.replayThreads.get(key)
      if (thread === undefined || !this.running.includes(thread)) {
        thread = this.leastLoaded()
        if (key !== undefined) this.replayThreads.set(key, thread)
      }
      const pending: Pending = { task, cost: cost(task), resolve, reject }
      thread.pending.push(pending)
      thread.load += pending.cost
      thread.worker.postMessage(task satisfies ProjectionMessage)
    })))
  }

  /** Forgets these adaptive replays here and on their threads, once their projection is done with them. */
  release(replayKeys: Iterable<string>): void {
    for (const key of replayKeys) {
      const thread = this.replayThreads.get(key)
      if (thread === undefined) continue
      this.replayThreads.delete(key)
      if (this.running.includes(thread)) thread.worker.postMessage({ release: key } satisfies ProjectionMessage)
    }
  }

  /** Adaptive replays placed on a thread and not released. */
  get replayCount(): number {
    return this.replayThreads.size
  }

  async close(): Promise<void> {
    const workers = this.running.splice(0).map((t) => t.worker)
    await Promise.all(workers.map((w) => w.terminate()))
  }

  private leastLoaded(): Thread {
    const idle = this.running.find((t) => t.pending.length === 0)
    if (idle !== undefined) return idle
    if (this.running.length < Math.max(1, this.threads)) return this.startThread()
    return this.running.reduce((a, b) => (b.load < a.load ? b : a))
  }

  private startThread(): Thread {
    const thread: Thread = { worker: new Worker(WORKER_URL), pending: [], load: 0 }
    this.running.push(thread)
    const failAll = (err: Error): void => {
      const at = this.running.indexOf(thread)
      if (at >= 0) this.running.splice(at, 1)
      for (const pending of thread.pending.splice(0)) pending.reject(err)
      thread.load = 0
    }
    thread.worker.on('message', (reply: ProjectionReply) => {
      const pending = thread.pending.shift()
      if (pending === undefined) return
      thread.load -= pending.cost
      if ('error' in reply) pending.reject(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `projecting ${this.label(pending.task)} failed: ${reply.error}`))
      else pending.resolve(reply.result)
    })
    thread.worker.on('error', (err) => failAll(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread failed: ${err.message}`, { cause: err })))
    thread.worker.on('exit', (code) => {
      if (code !== 0) failAll(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread exited with code ${code}`))
    })
    return thread
  }
}
