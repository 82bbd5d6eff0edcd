import { Worker } from 'node:worker_threads'
import { cutError, ErrorCodes, SqueezeError } from '../../errors.js'
import type { ChunkProjection, ProjectionTask } from './project-target.js'
import type { ProjectionMessage, ProjectionReply, ProjectionWorkerData } from './projection-worker.js'
import { packSlots } from './slot-table.js'

const WORKER_URL = new URL('./projection-worker.js', import.meta.url)
/**
 * Claim slots, one per task any thread may take: far more than are ever outstanding (a projection holds a few
 * chunks of a few dozen targets); a task that finds none free goes to one thread, as an adaptive replay's does.
 */
const CLAIM_SLOTS = 4096

interface Pending {
  readonly task: ProjectionTask
  readonly resolve: (result: ChunkProjection) => void
  readonly reject: (err: Error) => void
  /** Its claim slot, or -1 when it was posted to `thread` alone. */
  readonly slot: number
  readonly thread: Thread | null
}

interface Thread {
  readonly worker: Worker
  /** Written into a slot by the thread that claims its task: -1 - index. */
  readonly index: number
}

/**
 * `threads` projection threads, started together on first use (or by start()) and kept for every chunk and
 * batching a run projects (a thread costs tens of ms to start). Every task is posted to every thread at once, and
 * the first thread to reach it claims it (an atomic swap in shared memory); the others skip it. A thread goes from
 * one task to its next without waiting for this thread's event loop (busy re-batching the source), and none idles
 * while another has a queue: the targets' costs differ by 10x and more, and tasks placed on a thread when posted
 * left one thread idle for a second or more while the other worked through what it had been given. An adaptive
 * replay's tasks go to one thread, where its state lives. A task that throws fails with its target named; a thread
 * that dies fails the tasks it had claimed or was given alone.
 */
export class ProjectionPool {
  private readonly running: Thread[] = []
  private started = 0
  private readonly claims = new Int32Array(new SharedArrayBuffer(CLAIM_SLOTS * Int32Array.BYTES_PER_ELEMENT))
  private readonly freeSlots: number[] = Array.from({ length: CLAIM_SLOTS }, (_, i) => CLAIM_SLOTS - 1 - i)
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  /** The thread each adaptive replay runs on: its state stays there, and its chunks arrive in order. */
  private readonly replayThreads = new Map<string, Thread>()
  /** Each chunk's slots packed once for all of its tasks (they share one array). */
  private readonly slotTables = new WeakMap<ProjectionTask['slots'], Float64Array>()

  constructor(
    private readonly threads: number,
    private readonly label: (task: ProjectionTask) => string,
    private readonly workerUrl: URL = WORKER_URL,
    /** Each thread's V8 heap limits: a pass of many projections bounds them, or its peak memory creeps up. */
    private readonly resourceLimits?: { readonly maxYoungGenerationSizeMb?: number }
  ) {}

  /** Starts every thread now, so that loading their modules overlaps the caller's own start. */
  start(): void {
    if (this.started === 0) while (this.started < Math.max(1, this.threads)) this.startThread()
  }

  /**
   * Every task's result, in task order. Once `cut` is aborted, the tasks no thread has claimed yet are withdrawn
   * (no thread starts them) and the run rejects with the cut; a task a thread is running finishes there, unread.
   */
  run(tasks: readonly ProjectionTask[], cut?: AbortSignal): Promise<ChunkProjection[]> {
    if (cut?.aborted === true) return Promise.reject(cutError(cut))
    this.start()
    const ids: number[] = []
    const all = Promise.all(
      tasks.map(
        (task) =>
          new Promise<ChunkProjection>((resolve, reject) => {
            if (this.running.length === 0) {
              reject(
                new SqueezeError(
                  ErrorCodes.CODEC_CORRUPT,
                  `projecting ${this.label(task)} failed: every projection thread has exited`
                )
              )
              return
            }
            const id = this.nextId++
            ids.push(id)
            const key = task.adaptive?.replayKey
            const slot = key === undefined ? (this.freeSlots.pop() ?? -1) : -1
            let thread: Thread | null = null
            if (slot === -1) {
              const kept = key === undefined ? undefined : this.replayThreads.get(key)
              thread = kept !== undefined && this.running.includes(kept) ? kept : this.fewestGiven()
              if (key !== undefined) this.replayThreads.set(key, thread)
            }
            this.pending.set(id, { task, resolve, reject, slot, thread })
            if (slot >= 0) Atomics.store(this.claims, slot, id)
            const { slots, ...rest } = task
            let slotTable = this.slotTables.get(slots)
            if (slotTable === undefined) {
              slotTable = packSlots(slots)
              this.slotTables.set(slots, slotTable)
            }
            const message: ProjectionMessage = { id, slot, task: { ...rest, slotTable } }
            for (const t of thread === null ? this.running : [thread]) t.worker.postMessage(message)
          })
      )
    )
    if (cut === undefined) return all
    const withdraw = (): void => this.withdraw(ids, cutError(cut))
    cut.addEventListener('abort', withdraw, { once: true })
    return all.finally(() => cut.removeEventListener('abort', withdraw))
  }

  /**
   * Rejects the tasks among `ids` that no thread has claimed, taking their claim slots back first (a thread that
   * finds its task's id gone from the slot skips it). Tasks posted to one thread alone run there regardless.
   */
  private withdraw(ids: readonly number[], err: Error): void {
    for (const id of ids) {
      const pending = this.pending.get(id)
      if (pending === undefined || pending.slot < 0) continue
      if (Atomics.compareExchange(this.claims, pending.slot, id, 0) === id) this.settle(id)?.reject(err)
    }
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

  /** The running thread holding the fewest tasks given to it alone. */
  private fewestGiven(): Thread {
    const given = new Map<Thread, number>(this.running.map((t) => [t, 0]))
    for (const p of this.pending.values()) if (p.thread !== null) given.set(p.thread, (given.get(p.thread) ?? 0) + 1)
    return this.running.reduce((a, b) => ((given.get(b) ?? 0) < (given.get(a) ?? 0) ? b : a))
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id)
    if (pending === undefined) return undefined
    this.pending.delete(id)
    if (pending.slot >= 0) this.freeSlots.push(pending.slot)
    return pending
  }

  private startThread(): void {
    const index = this.started++
    const thread: Thread = {
      worker: new Worker(this.workerUrl, {
        workerData: { claims: this.claims, index } satisfies ProjectionWorkerData,
        ...(this.resourceLimits === undefined ? {} : { resourceLimits: this.resourceLimits })
      }),
      index
    }
    this.running.push(thread)
    const failHeld = (err: Error): void => {
      const at = this.running.indexOf(thread)
      if (at < 0) return
      this.running.splice(at, 1)
      const claimed = -1 - thread.index
      for (const [id, p] of [...this.pending]) {
        // Tasks no thread has claimed yet wait in the other threads' queues, unless none is left.
        const held =
          p.thread === thread ||
          (p.slot >= 0 && Atomics.load(this.claims, p.slot) === claimed) ||
          this.running.length === 0
        if (held) this.settle(id)?.reject(err)
      }
    }
    thread.worker.on('message', (reply: ProjectionReply) => {
      const pending = this.settle(reply.id)
      if (pending === undefined) return
      if ('error' in reply)
        pending.reject(
          new SqueezeError(ErrorCodes.CODEC_CORRUPT, `projecting ${this.label(pending.task)} failed: ${reply.error}`)
        )
      else pending.resolve(reply.result)
    })
    thread.worker.on('error', (err) =>
      failHeld(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread failed: ${err.message}`, { cause: err }))
    )
    thread.worker.on('exit', (code) => {
      failHeld(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `a projection thread exited with code ${code}`))
    })
  }
}
