import { parentPort } from 'node:worker_threads'
import {
  compressToOwnBuffer,
  createCodec,
  DECOMPRESS_HEADROOM,
  decompressIntoBuffer,
  formatCodecSpec,
  type CodecSpec
} from '../codecs/index.js'
import { threadCpuSeconds } from '../metrics/thread-cpu.js'

export interface AllCoresInit {
  /** The records sections, one after the other. */
  readonly data: SharedArrayBuffer
  readonly lengths: readonly number[]
  readonly specs: readonly CodecSpec[]
  /** The target this thread starts each round at. */
  readonly first: number
  readonly rounds: number
  /** Each round also decompresses what it compressed, as the projection reads every batch back. */
  readonly readBack: boolean
  /** Round n starts when this Int32 holds n. */
  readonly signal: SharedArrayBuffer
}

export type AllCoresReply =
  | { readonly kind: 'ready'; readonly compressedBytes: Readonly<Record<string, number>> }
  | {
      readonly kind: 'round'
      readonly endedAt: number
      readonly cpuSeconds: Readonly<Record<string, number>>
      readonly decompressCpuSeconds: Readonly<Record<string, number>>
    }
  | { readonly error: string }

// One thread of the all-cores sweep: compresses every target once from the shared sections (where a projection
// thread compresses its chunks from too) to load and warm it, then runs each round when the signal says so.
if (parentPort !== null) {
  const port = parentPort
  port.once('message', (init: AllCoresInit) => {
    try {
      const shared = Buffer.from(init.data)
      const sections: Buffer[] = []
      let at = 0
      for (const length of init.lengths) {
        sections.push(shared.subarray(at, at + length))
        at += length
      }
      const order = init.specs.map((_, i) => init.specs[(init.first + i) % init.specs.length] as CodecSpec)
      const codecs = order.map((spec) => ({ target: formatCodecSpec(spec), codec: createCodec(spec) }))
      const compressedBytes: Record<string, number> = {}
      for (const { target, codec } of codecs)
        compressedBytes[target] = sections.reduce((n, s) => n + compressToOwnBuffer(codec, s).length, 0)
      port.postMessage({ kind: 'ready', compressedBytes } satisfies AllCoresReply)
      // Read back as the projection does: into one reused buffer, `none` not decompressed at all.
      const plain = Buffer.allocUnsafe(init.readBack ? Math.max(0, ...init.lengths) + DECOMPRESS_HEADROOM : 0)
      const signal = new Int32Array(init.signal)
      for (let round = 1; round <= init.rounds; round++) {
        Atomics.wait(signal, 0, round - 1)
        const cpuSeconds: Record<string, number> = {}
        const decompressCpuSeconds: Record<string, number> = {}
        for (const { target, codec } of codecs) {
          const start = threadCpuSeconds()
          const compressed = sections.map((s) => compressToOwnBuffer(codec, s))
          const compressedAt = threadCpuSeconds()
          cpuSeconds[target] = compressedAt - start
          if (!init.readBack) continue
          if (codec.id !== 0) for (const c of compressed) decompressIntoBuffer(codec, c, plain)
          decompressCpuSeconds[target] = threadCpuSeconds() - compressedAt
        }
        port.postMessage({
          kind: 'round',
          endedAt: performance.timeOrigin + performance.now(),
          cpuSeconds,
          decompressCpuSeconds
        } satisfies AllCoresReply)
      }
    } catch (err) {
      port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies AllCoresReply)
    }
  })
}
