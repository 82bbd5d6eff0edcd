import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import type { CodecSpec } from '../codecs/index.js'
import type { Logger } from '../log/logger.js'
import { BATCH } from '../protocol/batch-layout.js'
import type { OpenBatch } from '../protocol/record-batch-builder.js'
import type { CompressionWorkerData, SealReply, SealRequest } from './compression-worker.js'
import type { SealBuffers } from './seal-buffers.js'
import type { SealDone, SealerLoad, ThreadLoad } from './seal-load.js'

interface InFlightSeal {
  readonly count: number
  readonly recordsBytes: number
  readonly firstTimestamp: number
  readonly done: SealDone
  /** The builder's shared memory the thread reads the records from: recycled once the thread replies. */
  readonly lent: SharedArrayBuffer | null
  /**
   * A batch given to a thread still booting, not posted yet: it waits here, and goes to the thread when the thread
   * is ready, or is sealed elsewhere if the thread dies before that (it may never boot: no thread can be created,
   * its module cannot load).
   */
  readonly kept?: { readonly batch: OpenBatch; readonly spec: CodecSpec; readonly givenAtMs: number }
}

export interface PoolThread {
  /** 1-based, for messages: "compression thread 2 of 3". */
  readonly number: number
  readonly worker: Worker
  readonly startedAt: number
  /** Its modules and codecs are loaded: until then it takes no batch. */
  ready: boolean
  /** This thread's batches by request id, in the order it seals them. */
  readonly inFlight: Map<number, InFlightSeal>
  queuedBytes: number
  /** When it last went from holding no batch to holding one; null while it holds none. */
  busySince: number | null
  busyMs: number
  cpuSeconds: number
  batches: number
  alive: boolean
}

/** Where a batch whose thread died before taking it is sealed instead. */
export type Reseal = (batch: OpenBatch, spec: CodecSpec, done: SealDone) => void

/**
 * Up to `size` compression threads and the batches handed to them. The builder's buffer is shared memory (no copy),
 * read in place by the thread, and serves the next builder once the thread replies; records from elsewhere go as one
 * shared copy. A thread that dies fails the batches it held with one clear error (counted, reported to
 * onDeliveryFailure) and is not replaced; batches it kept while booting are sealed elsewhere.
 */
export class CompressionPool {
  private readonly threads: PoolThread[] = []
  private nextId = 0
  private closing = false
  /** The codecs a new thread loads before it is ready. */
  private preload: readonly CodecSpec[] = []
  /**
   * Shared copies of records sections whose memory was not handed out here, by the view they came in: the copier
   * seals one source batch's records once per target, and every target's seal posts the one copy, not a copy each.
   */
  private readonly shared = new WeakMap<Uint8Array, Uint8Array>()

  constructor(
    private readonly size: number,
    private readonly log: Logger,
    private readonly workerUrl: URL,
    private readonly buffers: SealBuffers,
    private readonly reseal: Reseal
  ) {}

  preloading(specs: readonly CodecSpec[]): void {
    this.preload = specs.filter((s) => s.codec !== 'none')
  }

  /** How many threads were started, dead ones included. */
  get started(): number {
    return this.threads.length
  }

  canStart(): boolean {
    return this.threads.length < this.size
  }

  /** Whether a thread is compressing or booting: beside it, the process's CPU would count that thread's too. */
  busy(): boolean {
    return this.threads.some((t) => t.alive && (!t.ready || t.inFlight.size > 0))
  }

  /** The live thread with the fewest bytes queued, and whether any live thread is ready. */
  leastQueued(): { best: PoolThread | null; anyReady: boolean } {
    let best: PoolThread | null = null
    let anyReady = false
    for (const t of this.threads) {
      if (!t.alive) continue
      anyReady ||= t.ready
      if (best === null || t.queuedBytes < best.queuedBytes) best = t
    }
    return { best, anyReady }
  }

  /** Hands `batch` to `thread`: posted now when it is ready, else kept until it is. */
  give(thread: PoolThread, batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    const recordsBytes = batch.records.byteLength
    const id = this.nextId++
    if (thread.inFlight.size === 0) {
      // Referenced while it holds batches, so the process cannot exit with records still being compressed.
      thread.worker.ref()
      thread.busySince = performance.now()
    }
    const backing = this.buffers.ownedBacking(batch.records)
    const lent = backing instanceof SharedArrayBuffer ? backing : null
    const inFlight: InFlightSeal = {
      count: batch.count,
      recordsBytes,
      firstTimestamp: batch.firstTimestamp,
      done,
      lent
    }
    thread.queuedBytes += recordsBytes
    if (thread.ready) {
      thread.inFlight.set(id, inFlight)
      this.post(thread, id, batch, spec, Date.now())
    } else {
      // Not posted as a copy (the batch must stay here until the thread is ready): each fresh MiB costs the event
      // loop its page faults, and a copy would make one per batch while the thread boots.
      // A batch whose memory was not handed out here (a copied batch read into a reused buffer) is kept as a copy.
      const owned = this.buffers.ownedBacking(batch.records) !== null
      const keptBatch = owned ? batch : { ...batch, records: this.sharedCopy(batch.records) }
      thread.inFlight.set(id, { ...inFlight, kept: { batch: keptBatch, spec, givenAtMs: Date.now() } })
    }
  }

  load(): SealerLoad {
    const now = performance.now()
    let queuedBytes = 0
    let waitingBytes = 0
    let queuedBatches = 0
    const threads = this.threads.map((t): ThreadLoad => {
      queuedBytes += t.queuedBytes
      queuedBatches += t.inFlight.size
      const head = t.inFlight.values().next().value
      waitingBytes += t.queuedBytes - (head?.recordsBytes ?? 0)
      const busySeconds = (t.busyMs + (t.busySince === null ? 0 : now - t.busySince)) / 1000
      const idleSeconds = (now - t.startedAt) / 1000 - busySeconds
      return { busySeconds, idleSeconds, cpuSeconds: t.cpuSeconds, batches: t.batches, alive: t.alive, ready: t.ready }
    })
    return { queuedBytes, waitingBytes, queuedBatches, threads }
  }

  threadsLeft(): number {
    return this.size - this.threads.filter((t) => !t.alive).length
  }

  async close(): Promise<void> {
    this.closing = true
    await Promise.all(this.threads.map((t) => t.worker.terminate()))
  }

  startThread(): PoolThread {
    // Named, so `top -H` and /proc/PID/task/*/comm show which threads compress.
    const workerData: CompressionWorkerData = { thread: this.threads.length, preload: this.preload }
    const worker = new Worker(this.workerUrl, { name: `compression-${this.threads.length + 1}`, workerData })
    worker.unref()
    const thread: PoolThread = {
      number: this.threads.length + 1,
      worker,
      startedAt: performance.now(),
      ready: false,
      inFlight: new Map(),
      queuedBytes: 0,
      busySince: null,
      busyMs: 0,
      cpuSeconds: 0,
      batches: 0,
      alive: true
    }
    worker.on('message', (reply: SealReply) => this.onReply(thread, reply))
    worker.on('error', (err) => this.fail(thread, `failed: ${err.message}`))
    worker.on('exit', (code) => this.fail(thread, `exited with code ${code}`))
    this.threads.push(thread)
    return thread
  }

  /** `givenAtMs`: when the batch was given to the thread, so its wait counts from then, boot included. */
  private post(thread: PoolThread, id: number, batch: OpenBatch, spec: CodecSpec, givenAtMs: number): void {
    const owned = this.buffers.ownedBacking(batch.records)
    // A buffer not handed out here may be Node's pool or the caller's, reused: a shared copy goes. One handed out
    // here goes as it is: shared memory, or an ArrayBuffer transferred there and back.
    const records = owned === null ? this.sharedCopy(batch.records) : batch.records
    const request: SealRequest = { id, spec, batch: { ...batch, records }, postedAtMs: givenAtMs }
    thread.worker.postMessage(request, owned instanceof ArrayBuffer ? [owned] : [])
  }

  /** `records` in shared memory: itself when it is there already, else one copy per view, reused by its next seals. */
  private sharedCopy(records: Uint8Array): Uint8Array {
    if (records.buffer instanceof SharedArrayBuffer) return records
    let copy = this.shared.get(records)
    if (copy === undefined) {
      copy = new Uint8Array(new SharedArrayBuffer(records.byteLength))
      copy.set(records)
      this.shared.set(records, copy)
    }
    return copy
  }

  private onReply(thread: PoolThread, reply: SealReply): void {
    if ('ready' in reply) {
      this.ready(thread)
      return
    }
    const pending = thread.inFlight.get(reply.id)
    if (pending === undefined) return
    thread.inFlight.delete(reply.id)
    thread.queuedBytes -= pending.recordsBytes
    if (thread.inFlight.size === 0) this.idle(thread)
    // The thread is done reading the records, sealed or not.
    if (pending.lent !== null) this.buffers.returned(pending.lent)
    if ('error' in reply) {
      pending.done(new Error(reply.error))
      return
    }
    thread.cpuSeconds += reply.compressCpuSeconds
    thread.batches++
    if (reply.records !== null) this.buffers.returned(reply.records)
    const sealed = {
      bytes: Buffer.from(reply.bytes),
      recordCount: pending.count,
      uncompressedBytes: BATCH.HEADER_BYTES + pending.recordsBytes,
      compressCpuSeconds: reply.compressCpuSeconds,
      firstTimestamp: pending.firstTimestamp
    }
    pending.done(sealed, reply.timing)
  }

  /** The batches that waited for the thread, in the order they were given: from here on they are the thread's. */
  private ready(thread: PoolThread): void {
    thread.ready = true
    for (const [id, pending] of thread.inFlight) {
      if (pending.kept === undefined) continue
      const { kept, ...posted } = pending
      thread.inFlight.set(id, posted)
      this.post(thread, id, kept.batch, kept.spec, kept.givenAtMs)
    }
  }

  private idle(thread: PoolThread): void {
    thread.worker.unref()
    if (thread.busySince !== null) thread.busyMs += performance.now() - thread.busySince
    thread.busySince = null
  }

  private fail(thread: PoolThread, what: string): void {
    if (!thread.alive || this.closing) return
    thread.alive = false
    const reason = `compression thread ${thread.number} of ${this.size} ${what}`
    const left = this.threadsLeft()
    const pending = [...thread.inFlight.values()]
    thread.inFlight.clear()
    thread.queuedBytes = 0
    this.idle(thread)
    const next = left > 0 ? 'the other threads go on' : 'compressing on the event loop from now on'
    this.log.warn({ batches: pending.length, threadsLeft: left }, `${reason}; ${next}`)
    for (const p of pending) {
      if (p.kept === undefined) p.done(new Error(reason))
      else this.reseal(p.kept.batch, p.kept.spec, p.done)
    }
  }
}
