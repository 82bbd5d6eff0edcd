import { createHash } from 'node:crypto'
import { isAdaptive, type CodecSpec } from '../../codecs/index.js'
import { cutError } from '../../errors.js'
import type { LogKind } from '../../formats/index.js'
import type { AdaptiveLevelSettings } from '../../producer/config.js'
import { BATCH } from '../../protocol/batch-layout.js'
import type { BatchSlot, ChunkProjection } from './project-target.js'
import type { ProjectedBatch } from './rebatch.js'
import type { ProjectionPool } from './worker-pool.js'

/** What compressing every batch with one target, and reading each back as a consumer would, measured. */
export interface TargetProjection {
  readonly batches: number
  readonly records: number
  readonly uncompressedBytes: number
  /** Bytes of the sealed batches: what the broker stores, since it keeps a producer's batches as they are. */
  readonly storedBytes: number
  /** Stored bytes per batch, in the order the batches closed: what the confidence interval resamples. */
  readonly batchStoredBytes: readonly number[]
  /** Stored bytes per source partition, as DescribeLogDirs would report them for a copy. */
  readonly storedBytesByPartition: Readonly<Record<number, number>>
  readonly compressCpuSeconds: number
  readonly decompressCpuSeconds: number
  /** CRC check, walking the records and decoding their values, decompression left out. */
  readonly decodeCpuSeconds: number
  readonly readSeconds: number
  /**
   * sha256 over each chunk's sha256 of its records as read back, in order: equal across the targets of a run when
   * every codec round-tripped. A chunk that read back as it went in is hashed once, not once per target.
   */
  readonly digest: string
  /** codec:adaptive: the level each batch was sealed at, in the order the batches closed. */
  readonly levels?: readonly number[]
}

/**
 * A chunk is a few batch.size's worth of batches: one message to a thread per target carries it, so hand-offs
 * cost little next to compressing it, and a few chunks in flight keep every thread busy while the reader
 * fetches the next ones.
 */
export const CHUNK_BYTES = 8 * 1024 * 1024
export const CHUNKS_IN_FLIGHT = 4
/** Names each projection's adaptive replays apart, on threads a pool keeps for many projections. */
let projections = 0

interface Chunk {
  readonly slots: readonly BatchSlot[]
  /** sha256 of the chunk's records as they went in; null without a read-back. */
  readonly digest: Buffer | null
  readonly results: Array<ChunkProjection | undefined>
}

/**
 * Projects batches as they close: copies them into shared chunks that every projection thread reads without a
 * copy of its own, hands each full chunk to the pool once per target, and adds up each target's results in
 * batch order. Reading, re-batching and compressing then overlap, and memory holds a few chunks, not the topic.
 */
export class ChunkedProjection {
  private data: SharedArrayBuffer | null = null
  private view: Uint8Array = new Uint8Array(0)
  private at = 0
  private slots: BatchSlot[] = []
  private readonly chunks: Chunk[] = []
  private readonly work: Array<Promise<void>> = []
  private inFlight = 0
  private wake: Array<() => void> = []
  private failure: unknown = null
  /** Chunks every target is done with, for the next ones: a fresh 8 MiB per chunk costs page faults. */
  private readonly spare: SharedArrayBuffer[] = []
  private waitedMs = 0
  /** Uncompressed size of every batch (header included), in the order they closed. */
  readonly uncompressedPerBatch: number[] = []
  records = 0
  private readonly id = ++projections

  constructor(
    private readonly pool: ProjectionPool,
    private readonly specs: readonly CodecSpec[],
    private readonly options: {
      readonly format: LogKind | null
      readonly readBack: boolean
      readonly chunkBytes?: number
      readonly lingerMs?: number
      /** codec:adaptive targets: the producer's level range and CPU budget. */
      readonly adaptiveLevel?: AdaptiveLevelSettings
      /**
       * Stops the projection where it stands: chunks not yet taken by a thread are withdrawn, and belowLimit
       * and finish reject with the cut at once.
       */
      readonly cut?: AbortSignal
    }
  ) {
    options.cut?.addEventListener('abort', this.onCut, { once: true })
  }

  private readonly onCut = (): void => {
    this.failure ??= cutError(this.options.cut as AbortSignal)
    for (const resolve of this.wake.splice(0)) resolve()
  }

  get batches(): number {
    return this.uncompressedPerBatch.length
  }

  get uncompressedBytes(): number {
    return this.uncompressedPerBatch.reduce((a, b) => a + b, 0)
  }

  /** Mean wait of each batch's first record before its batch closed. */
  get meanWaitMs(): number {
    return this.batches === 0 ? 0 : this.waitedMs / this.batches
  }

  push(batch: ProjectedBatch): void {
    const length = batch.records.length
    if (this.data !== null && this.at + length > this.data.byteLength) this.submit()
    if (this.data === null) {
      const chunkBytes = Math.max(this.options.chunkBytes ?? CHUNK_BYTES, 1)
      this.data =
        (length <= chunkBytes ? this.spare.pop() : undefined) ?? new SharedArrayBuffer(Math.max(chunkBytes, length))
      this.view = new Uint8Array(this.data)
      this.at = 0
    }
    this.view.set(batch.records, this.at)
    this.slots.push({
      partition: batch.partition,
      start: this.at,
      end: this.at + length,
      count: batch.count,
      firstTimestamp: batch.firstTimestamp,
      maxTimestamp: batch.maxTimestamp
    })
    this.at += length
    this.uncompressedPerBatch.push(BATCH.HEADER_BYTES + length)
    this.waitedMs += batch.waitedMs
    this.records += batch.count
  }

  /** Resolves once fewer than CHUNKS_IN_FLIGHT chunks are being projected: a reader waits here, so memory stays bounded. */
  async belowLimit(): Promise<void> {
    while (this.inFlight >= CHUNKS_IN_FLIGHT && this.failure === null)
      await new Promise<void>((resolve) => this.wake.push(resolve))
    if (this.failure !== null) throw this.failure
  }

  /** Projects the batches still held, then every target's totals, in the order of the specs. */
  async finish(): Promise<TargetProjection[]> {
    try {
      if (this.data !== null && this.failure === null) this.submit()
      // A failed projection has no result to wait for: the chunks still on threads end there, their results unread.
      if (this.failure === null) await Promise.all(this.work)
      this.pool.release(this.specs.map((_, t) => this.replayKey(t)))
      if (this.failure !== null) throw this.failure
      return this.specs.map((_, t) => this.total(t))
    } finally {
      this.options.cut?.removeEventListener('abort', this.onCut)
    }
  }

  private submit(): void {
    const data = this.data as SharedArrayBuffer
    const chunk: Chunk = {
      slots: this.slots,
      digest: this.options.readBack ? createHash('sha256').update(this.view.subarray(0, this.at)).digest() : null,
      results: []
    }
    this.chunks.push(chunk)
    this.data = null
    this.slots = []
    this.inFlight++
    const tasks = this.specs.map((spec, t) => ({
      spec,
      format: this.options.format,
      data,
      slots: chunk.slots,
      readBack: this.options.readBack,
      walk: t === 0,
      ...(isAdaptive(spec)
        ? {
            adaptive: {
              lingerMs: this.options.lingerMs ?? 0,
              replayKey: this.replayKey(t),
              ...(this.options.adaptiveLevel === undefined ? {} : { level: this.options.adaptiveLevel })
            }
          }
        : {})
    }))
    this.work.push(
      this.pool
        .run(tasks, this.options.cut)
        .then(
          (results) => {
            chunk.results.push(...withSharedWalk(results))
            if (data.byteLength === Math.max(this.options.chunkBytes ?? CHUNK_BYTES, 1)) this.spare.push(data)
          },
          (err: unknown) => {
            this.failure ??= err
          }
        )
        .finally(() => {
          this.inFlight--
          for (const resolve of this.wake.splice(0)) resolve()
        })
    )
  }

  private replayKey(target: number): string {
    return `${this.id}:${target}`
  }

  private total(target: number): TargetProjection {
    const storedBytesByPartition: Record<number, number> = {}
    const batchStoredBytes: number[] = []
    const digest = createHash('sha256')
    const levels: number[] = []
    let records = 0
    let compressCpuSeconds = 0
    let decompressCpuSeconds = 0
    let decodeCpuSeconds = 0
    let readSeconds = 0
    for (const chunk of this.chunks) {
      const r = chunk.results[target] as ChunkProjection
      chunk.slots.forEach((slot, i) => {
        storedBytesByPartition[slot.partition] =
          (storedBytesByPartition[slot.partition] ?? 0) + (r.batchStoredBytes[i] as number)
      })
      batchStoredBytes.push(...r.batchStoredBytes)
      if (r.levels !== undefined) levels.push(...r.levels)
      records += r.records
      compressCpuSeconds += r.compressCpuSeconds
      decompressCpuSeconds += r.decompressCpuSeconds
      decodeCpuSeconds += r.decodeCpuSeconds
      readSeconds += r.readSeconds
      if (chunk.digest !== null) digest.update(r.mismatch === null ? chunk.digest : Buffer.from(r.mismatch, 'hex'))
    }
    return {
      batches: batchStoredBytes.length,
      records,
      uncompressedBytes: this.uncompressedBytes,
      storedBytes: batchStoredBytes.reduce((a, b) => a + b, 0),
      batchStoredBytes,
      storedBytesByPartition,
      compressCpuSeconds,
      decompressCpuSeconds,
      decodeCpuSeconds,
      readSeconds: Math.max(readSeconds, 1e-6),
      digest: this.options.readBack ? digest.digest('hex') : '',
      ...(isAdaptive(this.specs[target] as CodecSpec) ? { levels } : {})
    }
  }
}

/**
 * A target whose records read back as the chunk's own bytes was not walked: the target that walked those same
 * bytes (every chunk has one) took what walking them takes, so its walk is counted for the others too.
 */
function withSharedWalk(results: readonly ChunkProjection[]): ChunkProjection[] {
  const walk = results.find((r) => r.walk !== undefined)?.walk
  if (walk === undefined) return [...results]
  return results.map((r) =>
    r.walk !== undefined || r.mismatch !== null
      ? r
      : { ...r, decodeCpuSeconds: r.decodeCpuSeconds + walk.cpuSeconds, readSeconds: r.readSeconds + walk.seconds }
  )
}

/** Projects a list of batches already made (a sample's windows, a what-if's batching). */
export async function projectBatches(
  batches: Iterable<ProjectedBatch>,
  projection: ChunkedProjection
): Promise<TargetProjection[]> {
  for (const batch of batches) {
    projection.push(batch)
    await projection.belowLimit()
  }
  return projection.finish()
}
