import type { SealedBatch } from '../protocol/record-batch-builder.js'
import type { SealTiming } from './compression-worker.js'

/** `timing` comes with batches a compression thread sealed; none with those sealed on the event loop. */
export type SealDone = (result: SealedBatch | Error, timing?: SealTiming) => void

/** One compression thread's (or, sealing inline, the event loop's) figures, cumulative since it started. */
export interface ThreadLoad {
  /** Wall seconds the thread held at least one batch, queued on it or being compressed. */
  readonly busySeconds: number
  /** Wall seconds since it started that it held none. */
  readonly idleSeconds: number
  /** CPU seconds it spent sealing: the sum of its batches' compressCpuSeconds. */
  readonly cpuSeconds: number
  readonly batches: number
  /** False once the thread died; its figures stay as they were. */
  readonly alive: boolean
  /** It has loaded its modules and codecs; until then batches are sealed on the event loop or wait for it. */
  readonly ready: boolean
}

/** What an adaptive compression level reads: how far compression is behind, and how busy it is. */
export interface SealerLoad {
  /** Record bytes handed to the compression threads and not sealed yet (waiting, or being compressed). */
  readonly queuedBytes: number
  /** Of those, the bytes no thread has started on: they wait behind another batch. */
  readonly waitingBytes: number
  readonly queuedBatches: number
  /** Every thread started so far, in start order; one entry for the event loop when sealing inline. */
  readonly threads: readonly ThreadLoad[]
}
