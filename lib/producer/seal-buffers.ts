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
 * here may be recycled; any other may be shared (Node's pool). They are shared memory, so a compression thread reads
 * a batch where it is and the buffer comes back for the next builder once the thread replies: a buffer transferred
 * there and back is a new ArrayBuffer on each side each time, and V8 counts every one as fresh external memory, which
 * set off a full garbage collection every few dozen batches.
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
    const fresh = Buffer.from(new SharedArrayBuffer(size))
    this.owned.add(fresh.buffer)
    return fresh
  }

  /** The records' backing memory when it was handed out here (so it may be recycled), else null. */
  ownedBacking(records: Uint8Array): ArrayBufferLike | null {
    const backing = records.buffer
    return this.owned.has(backing) ? backing : null
  }

  /** Takes back memory handed out here, which a compression thread is done with. */
  returned(buffer: ArrayBufferLike): void {
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

  private recycle(buffer: ArrayBufferLike): void {
    if (this.spares.length < this.spareBuffers) this.spares.push(Buffer.from(buffer))
  }
}
