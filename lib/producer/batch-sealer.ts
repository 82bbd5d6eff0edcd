import { Worker } from 'node:worker_threads'
import { codecCache, type CodecSpec } from '../codecs/index.js'
import type { Logger } from '../log/logger.js'
import { BATCH } from '../protocol/batch-layout.js'
import { sealRecords, type OpenBatch, type SealedBatch } from '../protocol/record-batch-builder.js'
import type { SealReply, SealRequest } from './compression-worker.js'

export type SealDone = (result: SealedBatch | Error) => void

/**
 * Compresses finished batches, and recycles the builders' buffers. On the event loop, compressing batch N
 * blocks encoding batch N+1 and handling acknowledgements; on a worker thread they overlap on the second core.
 * Fresh 1 MiB buffers cost page faults and GC on every batch, hence the recycling.
 */
export interface BatchSealer {
  /** Starts the compression thread, if any, ahead of the first batch. */
  start(): void
  /** A buffer for a new batch builder: a recycled one when there is one of this size. */
  buffer(size: number): Buffer
  /** Calls `done` with the sealed batch, or the codec's error; synchronously when sealing inline. */
  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void
  close(): Promise<void>
}

/** Below this many record bytes a round trip to the worker costs more than compressing here. */
export const INLINE_BELOW_BYTES = 16 * 1024
/** Spare builder buffers kept for reuse (beyond buffer.memory, which counts only batches in use). */
const SPARE_BUFFERS = 4

const WORKER_URL = new URL('./compression-worker.js', import.meta.url)

/** `workerUrl` is for tests that need a compression thread which misbehaves. */
export function createBatchSealer(useWorker: boolean, log: Logger, workerUrl: URL = WORKER_URL): BatchSealer {
  return useWorker ? new WorkerSealer(log, workerUrl) : new InlineSealer()
}

class InlineSealer implements BatchSealer {
  private readonly codec = codecCache()
  private readonly spares: Buffer[] = []
  /** Buffers this sealer handed out: only these may be recycled or transferred to another thread. */
  protected readonly owned = new WeakSet<ArrayBufferLike>()

  buffer(size: number): Buffer {
    const spare = this.spares.pop()
    if (spare !== undefined && spare.length === size) return spare
    const fresh = Buffer.allocUnsafeSlow(size)
    this.owned.add(fresh.buffer)
    return fresh
  }

  start(): void {}

  /** The records' backing buffer when this sealer handed it out (so it may be recycled or transferred), else null. */
  protected ownedBacking(records: Uint8Array): ArrayBuffer | null {
    const backing = records.buffer
    return this.owned.has(backing) && backing instanceof ArrayBuffer ? backing : null
  }

  protected recycle(buffer: ArrayBuffer): void {
    if (this.spares.length < SPARE_BUFFERS) this.spares.push(Buffer.from(buffer))
  }

  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    let result: SealedBatch | Error
    try {
      result = sealRecords(batch, this.codec(spec), Buffer.allocUnsafe)
    } catch (err) {
      result = err instanceof Error ? err : new Error(String(err))
    }
    const backing = this.ownedBacking(batch.records)
    if (backing !== null) this.recycle(backing)
    done(result)
  }

  async close(): Promise<void> {}
}

interface InFlightSeal {
  readonly count: number
  readonly recordsBytes: number
  readonly firstTimestamp: number
  readonly done: SealDone
}

/**
 * One compression thread, started at the first large batch. The builder's buffer is transferred to it (no
 * copy) and comes back with the sealed batch for the next builder. If the thread dies, the batches it held
 * fail with a clear error (counted, reported to onDeliveryFailure) and later batches are sealed inline.
 */
class WorkerSealer extends InlineSealer {
  private worker: Worker | null = null
  private broken = false
  private nextId = 0
  private readonly inFlight = new Map<number, InFlightSeal>()

  constructor(private readonly log: Logger, private readonly workerUrl: URL) {
    super()
  }

  override seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    if (this.broken || spec.codec === 'none' || batch.records.length < INLINE_BELOW_BYTES) {
      super.seal(batch, spec, done)
      return
    }
    const worker = this.startWorker()
    const id = this.nextId++
    // Referenced while it holds batches, so the process cannot exit with records still being compressed.
    if (this.inFlight.size === 0) worker.ref()
    this.inFlight.set(id, { count: batch.count, recordsBytes: batch.records.byteLength, firstTimestamp: batch.firstTimestamp, done })
    // A buffer this sealer did not hand out may be shared (Node's pool): send a copy of the records instead.
    const records = this.ownedBacking(batch.records) !== null ? batch.records : new Uint8Array(batch.records)
    const request: SealRequest = { id, spec, batch: { ...batch, records } }
    worker.postMessage(request, [records.buffer as ArrayBuffer])
  }

  override start(): void {
    if (!this.broken) this.startWorker()
  }

  private startWorker(): Worker {
    if (this.worker !== null) return this.worker
    const worker = new Worker(this.workerUrl)
    worker.unref()
    worker.on('message', (reply: SealReply) => this.onReply(reply))
    worker.on('error', (err) => this.fail(`compression thread failed: ${err.message}`))
    worker.on('exit', (code) => {
      if (this.worker === worker) this.fail(`compression thread exited with code ${code}`)
    })
    this.worker = worker
    return worker
  }

  private onReply(reply: SealReply): void {
    const pending = this.inFlight.get(reply.id)
    if (pending === undefined) return
    this.inFlight.delete(reply.id)
    if (this.inFlight.size === 0) this.worker?.unref()
    if ('error' in reply) {
      pending.done(new Error(reply.error))
      return
    }
    this.owned.add(reply.records)
    this.recycle(reply.records)
    pending.done({
      bytes: Buffer.from(reply.bytes),
      recordCount: pending.count,
      uncompressedBytes: BATCH.HEADER_BYTES + pending.recordsBytes,
      compressCpuSeconds: reply.compressCpuSeconds,
      firstTimestamp: pending.firstTimestamp
    })
  }

  private fail(reason: string): void {
    if (this.broken) return
    this.broken = true
    this.worker = null
    this.log.warn({ batches: this.inFlight.size }, `${reason}; compressing on the event loop from now on`)
    const pending = [...this.inFlight.values()]
    this.inFlight.clear()
    for (const p of pending) p.done(new Error(reason))
  }

  override async close(): Promise<void> {
    const worker = this.worker
    this.worker = null
    if (worker !== null) await worker.terminate()
  }
}
