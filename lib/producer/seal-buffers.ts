import { codecCache, type CodecSpec } from '../codecs/index.js'
import { sealRecords, type OpenBatch, type SealedBatch } from '../protocol/record-batch-builder.js'

/**
 * Spare builder buffers kept for reuse when the caller gives no count. The producer keeps as many as buffer.memory
 * holds batches, as Java's BufferPool does: a fresh 1 MiB buffer costs more CPU in page faults on first write
 * than lz4:1 spends compressing it.
 */
export const SPARE_BUFFERS = 4

/**
 * The builders' buffers, recycled: fresh ones cost page faults and GC on every batch. Only buffers handed out
 * here may be recycled or transferred to another thread; any other may be shared (Node's pool).
 */
export class SealBuffers {
  private readonly codec = codecCache()
  private readonly spares: Buffer[] = []
  private readonly owned = new WeakSet<ArrayBufferLike>()

  constructor(private readonly spareBuffers: number) {}

  /** A buffer for a new batch builder: a recycled one when there is one of this size. */
  buffer(size: number): Buffer {
    const spare = this.spares.pop()
    if (spare !== undefined && spare.length === size) return spare
    const fresh = Buffer.allocUnsafeSlow(size)
    this.owned.add(fresh.buffer)
    return fresh
  }

  /** The records' backing buffer when it was handed out here (so it may be recycled or transferred), else null. */
  ownedBacking(records: Uint8Array): ArrayBuffer | null {
    const backing = records.buffer
    return this.owned.has(backing) && backing instanceof ArrayBuffer ? backing : null
  }

  /** Takes back a buffer handed out here, which came back from a compression thread. */
  returned(buffer: ArrayBuffer): void {
    this.owned.add(buffer)
    this.recycle(buffer)
  }

  /** Seals `batch` on this thread, then recycles its buffer. */
  sealHere(batch: OpenBatch, spec: CodecSpec, cpuSeconds?: () => number): SealedBatch | Error {
    let result: SealedBatch | Error
    try {
      result = sealRecords(batch, this.codec(spec), Buffer.allocUnsafe, cpuSeconds)
    } catch (err) {
      result = err instanceof Error ? err : new Error(String(err))
    }
    const backing = this.ownedBacking(batch.records)
    if (backing !== null) this.recycle(backing)
    return result
  }

  private recycle(buffer: ArrayBuffer): void {
    if (this.spares.length < this.spareBuffers) this.spares.push(Buffer.from(buffer))
  }
}
