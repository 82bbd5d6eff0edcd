import { performance } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'
import { codecCache, type CodecSpec } from '../codecs/index.js'
import { threadCpuSeconds } from '../metrics/thread-cpu.js'
import { NO_CLOCK, sealRecords, type OpenBatch } from '../protocol/record-batch-builder.js'
import { settleDetachProtector } from '../detach-protector.js'

/** What the producer's event loop sends to a compression thread: one batch to seal. */
export interface SealRequest {
  readonly id: number
  readonly spec: CodecSpec
  readonly batch: OpenBatch
  /**
   * Date.now() when the event loop gave the batch to this thread (one given while the thread booted is posted when
   * it is ready): the thread works out how long the batch waited for it.
   */
  readonly postedAtMs: number
}

/**
 * The sealed batch (header plus compressed records) and the builder's buffer, both transferred back (null for
 * records posted in shared memory, which stay where they are); or why it failed.
 */
export type SealReply =
  | {
      readonly id: number
      readonly bytes: ArrayBuffer
      readonly records: ArrayBuffer | null
      readonly compressCpuSeconds: number
      readonly timing: SealTiming
    }
  | { readonly id: number; readonly error: string }
  | { readonly ready: true }

/** What a compression thread is started with: the codecs to load before it says it is ready. */
export interface CompressionWorkerData {
  readonly thread: number
  readonly preload: readonly CodecSpec[]
}

/**
 * Measured on the compression thread, so an event loop too busy to take the reply at once adds nothing: how long
 * the batch waited for the thread (behind other batches, or for a core), and the wall time the thread spent on it.
 */
export interface SealTiming {
  readonly waitedMs: number
  readonly wallSeconds: number
}

// Runs on each compression thread of the pool: one codec instance per codec and level, batches sealed in arrival order.
if (parentPort !== null) {
  settleDetachProtector()
  const port = parentPort
  const codecFor = codecCache()
  // This thread does nothing but seal batches, so its own CPU time (not the process's, which would count every
  // thread of the pool) is the compression path's. Each reply carries the thread's CPU since its previous reply,
  // so receiving a batch and posting it back count with its compression, and the sums per thread hold every
  // CPU second the thread spent.
  let cpuAtLastReply: number | undefined
  port.on('message', (request: SealRequest) => {
    cpuAtLastReply ??= threadCpuSeconds()
    const startedAtMs = Date.now()
    const t0 = performance.now()
    try {
      // allocUnsafeSlow: a buffer that owns its ArrayBuffer, so it can be transferred without a copy. The thread's
      // CPU since its last reply is the batch's cost (below), so sealRecords gets a clock that reads nothing.
      const sealed = sealRecords(request.batch, codecFor(request.spec), Buffer.allocUnsafeSlow, NO_CLOCK)
      const bytes = sealed.bytes.buffer as ArrayBuffer
      const backing = request.batch.records.buffer
      const records = backing instanceof SharedArrayBuffer ? null : (backing as ArrayBuffer)
      const cpu = threadCpuSeconds()
      const timing: SealTiming = {
        waitedMs: Math.max(0, startedAtMs - request.postedAtMs),
        wallSeconds: (performance.now() - t0) / 1000
      }
      const reply: SealReply = {
        id: request.id,
        bytes,
        records,
        compressCpuSeconds: Math.max(0, cpu - cpuAtLastReply),
        timing
      }
      cpuAtLastReply = cpu
      port.postMessage(reply, records === null ? [bytes] : [bytes, records])
    } catch (err) {
      const reply: SealReply = { id: request.id, error: err instanceof Error ? err.message : String(err) }
      port.postMessage(reply)
    }
  })
  // Loading a codec's native library takes tens of ms: done now, before the first batch comes, and then the
  // event loop is told to stop sealing inline. A codec that fails to load fails its first batch, with the reason.
  for (const spec of (workerData as CompressionWorkerData | undefined)?.preload ?? []) {
    try {
      codecFor(spec)
    } catch {
      // reported by the batch that needs it
    }
  }
  port.postMessage({ ready: true } satisfies SealReply)
}
