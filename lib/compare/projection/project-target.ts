import { createHash } from 'node:crypto'
import {
  createCodec,
  DECOMPRESS_HEADROOM,
  decoderForId,
  decompressIntoBuffer,
  formatCodecSpec,
  isAdaptive,
  type Codec,
  type CodecSpec
} from '../../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../../errors.js'
import { formatFor, type LogFormat, type LogKind } from '../../formats/index.js'
import { rangeDecoder } from '../../formats/log-format.js'
import { threadCpuSeconds } from '../../metrics/thread-cpu.js'
import { BATCH } from '../../protocol/batch-layout.js'
import { crc32c } from '../../protocol/crc32c.js'
import {
  NO_CLOCK,
  NON_IDEMPOTENT,
  sealRecords,
  stampProducerState,
  writeBatchHeader
} from '../../protocol/record-batch-builder.js'
import { readBatch } from '../../protocol/record-batch-reader.js'
import type { AdaptiveLevelSettings } from '../../producer/config.js'
import { AdaptiveReplay } from './adaptive-replay.js'

/** Where each uncompressed batch sits in a chunk's shared buffer, and the header fields it needs. */
export interface BatchSlot {
  readonly partition: number
  readonly start: number
  readonly end: number
  readonly count: number
  readonly firstTimestamp: number
  readonly maxTimestamp: number
}

/** One target over one chunk of batches: the records live in `data`, shared by every thread without a copy. */
export interface ProjectionTask {
  readonly spec: CodecSpec
  /** Decode every value as this log kind while reading back; null reads bytes only. */
  readonly format: LogKind | null
  readonly data: SharedArrayBuffer
  readonly slots: readonly BatchSlot[]
  /** Read every batch back (consumer CPU, round-trip check); a batching what-if needs sizes only. */
  readonly readBack: boolean
  /**
   * Walk (and decode) the records read back even when they are the chunk's own bytes. One target per chunk does:
   * the others' identical bytes would cost the same, so its walk stands for theirs (see RecordWalk).
   */
  readonly walk?: boolean
  /**
   * codec:adaptive: linger.ms the batches were made with (the replay counts waits beyond it as missed deadlines),
   * and a key naming the target's replay, whose state carries from one chunk to the next on the same thread;
   * `level`: the producer's level range and CPU budget.
   */
  readonly adaptive?: { readonly lingerMs: number; readonly replayKey: string; readonly level?: AdaptiveLevelSettings }
}

/** What sealing one chunk's batches with one target, and reading them back as a consumer would, measured. */
export interface ChunkProjection {
  readonly records: number
  /** Bytes of each sealed batch, in slot order: what the broker stores, since it keeps a producer's batches as they are. */
  readonly batchStoredBytes: readonly number[]
  readonly compressCpuSeconds: number
  readonly decompressCpuSeconds: number
  /** CRC check, walking the records and decoding their values: a consumer's work besides decompression. */
  readonly decodeCpuSeconds: number
  readonly readSeconds: number
  /** null when every batch read back byte for byte as it went in; else the sha256 of what was read back. */
  readonly mismatch: string | null
  /** codec:adaptive: the level each batch was sealed at, in slot order. */
  readonly levels?: readonly number[]
  /**
   * What walking (and decoding) the records took, when this target walked them; part of decodeCpuSeconds and
   * readSeconds here. Absent when it did not (its bytes were the chunk's own, walked by another target).
   */
  readonly walk?: RecordWalk
}

/** CPU and wall time of walking one chunk's records as a consumer does, after the CRC check. */
export interface RecordWalk {
  readonly cpuSeconds: number
  readonly seconds: number
}

/**
 * A projection thread's reusable memory and codecs: a thread projects many chunks, and a fresh buffer per chunk
 * costs page faults, a codec per chunk its context set-up.
 */
export class ChunkProjector {
  private readonly codecs = new Map<string, Codec>()
  /** codec:adaptive replays by key: every chunk of one target in one projection comes to the same thread, in order. */
  private readonly replays = new Map<string, AdaptiveReplay>()
  private plain = Buffer.allocUnsafe(0)
  /** The sealed batches of one chunk, carved one after the other: a fresh buffer per batch costs page faults. */
  private sealedArena = Buffer.allocUnsafe(0)

  /**
   * Seals every batch with the producer's own sealRecords, then reads each back once as a consumer does:
   * decompress into one buffer, then check the CRC and walk (and decode) the records. Each cost is measured over
   * a whole pass with this thread's CPU clock (process.cpuUsage would count the other targets' threads, and the
   * thread clock moves in scheduler ticks, so per-batch readings would not add up). Comparing what was read back
   * with what went in is not timed.
   */
  project(task: ProjectionTask): ChunkProjection {
    const replay = this.replayFor(task)
    const codec = this.codecFor(replay?.spec ?? task.spec)
    const shared = Buffer.from(task.data)
    const sealed = new Array<Buffer>(task.slots.length)
    const allocate = this.arenaFor(task.slots)
    // An adaptive target seals in the order the batches closed, each at the level its replay picks by then.
    const order = replay?.order ?? task.slots.map((_, i) => i)
    const compressStart = threadCpuSeconds()
    for (const [position, index] of order.entries()) {
      const slot = task.slots[index] as BatchSlot
      const spec = replay?.spec ?? task.spec
      const startedAt = performance.now()
      // Compressed where the chunk lies: every codec takes memory a SharedArrayBuffer backs (test/lib/codecs).
      const batch = sealRecords(
        {
          records: shared.subarray(slot.start, slot.end),
          count: slot.count,
          firstTimestamp: slot.firstTimestamp,
          maxTimestamp: slot.maxTimestamp
        },
        replay === null ? codec : this.codecFor(spec),
        allocate,
        NO_CLOCK
      )
      replay?.sealed(position, spec, (performance.now() - startedAt) / 1000)
      sealed[index] = batch.bytes
    }
    const compressCpuSeconds = threadCpuSeconds() - compressStart
    for (const bytes of sealed) stampProducerState(bytes, NON_IDEMPOTENT)
    const batchStoredBytes = sealed.map((b) => b.length)
    const levels = replay === null ? {} : { levels: [...replay.levels] }
    if (!task.readBack)
      return {
        records: task.slots.reduce((n, s) => n + s.count, 0),
        batchStoredBytes,
        compressCpuSeconds,
        decompressCpuSeconds: 0,
        decodeCpuSeconds: 0,
        readSeconds: 0,
        mismatch: null,
        ...levels
      }
    return { batchStoredBytes, compressCpuSeconds, ...this.readBack(task, codec, sealed, shared), ...levels }
  }

  /**
   * Hands out the chunk's sealed batches from one reused buffer, sized for the records plus a header each (and
   * a little growth: incompressible records come out slightly larger); a batch that does not fit gets its own.
   */
  private arenaFor(slots: readonly BatchSlot[]): (size: number) => Buffer {
    const bytes = slots.reduce((n, s) => n + BATCH.HEADER_BYTES + s.end - s.start, 0)
    const wanted = bytes + (bytes >> 6) + 64 * 1024
    if (this.sealedArena.length < wanted) this.sealedArena = Buffer.allocUnsafe(wanted)
    let used = 0
    return (size) => {
      if (used + size > this.sealedArena.length) return Buffer.allocUnsafe(size)
      used += size
      return this.sealedArena.subarray(used - size, used)
    }
  }

  private readBack(
    task: ProjectionTask,
    codec: Codec,
    sealed: readonly Buffer[],
    shared: Buffer
  ): Omit<ChunkProjection, 'batchStoredBytes' | 'compressCpuSeconds'> {
    const format = task.format === null ? null : formatFor(task.format)
    const decoder = codec.id === 0 ? undefined : decoderForId(codec.id)
    // Each batch decompressed in place behind room for a header: uncompressed, it reads as a consumer's batch.
    const total = task.slots.reduce((n, s) => n + BATCH.HEADER_BYTES + s.end - s.start, 0)
    if (decoder !== undefined && this.plain.length < total + DECOMPRESS_HEADROOM)
      this.plain = Buffer.allocUnsafe(total + DECOMPRESS_HEADROOM)
    const plainAt: number[] = []
    let at = 0
    for (const slot of task.slots) {
      plainAt.push(at)
      at += BATCH.HEADER_BYTES + slot.end - slot.start
    }

    const decompressStart = threadCpuSeconds()
    if (decoder !== undefined) {
      sealed.forEach((bytes, i) =>
        decompressIntoBuffer(
          decoder,
          bytes.subarray(BATCH.HEADER_BYTES),
          this.plain.subarray((plainAt[i] as number) + BATCH.HEADER_BYTES)
        )
      )
    }
    const decompressCpuSeconds = threadCpuSeconds() - decompressStart

    const readable =
      decoder === undefined
        ? sealed
        : task.slots.map((slot, i) => {
            const view = this.plain.subarray(
              plainAt[i] as number,
              (plainAt[i] as number) + BATCH.HEADER_BYTES + slot.end - slot.start
            )
            writeBatchHeader(view, {
              count: slot.count,
              attributes: 0,
              firstTimestamp: slot.firstTimestamp,
              maxTimestamp: slot.maxTimestamp
            })
            return view
          })
    // Compared first (untimed): records that read back as they went in need no walk of their own.
    const bodies = readable.map((b) => b.subarray(BATCH.HEADER_BYTES))
    const same = task.slots.every((slot, i) => shared.subarray(slot.start, slot.end).equals(bodies[i] as Buffer))
    const mismatch = same ? null : bodies.reduce((hash, body) => hash.update(body), createHash('sha256')).digest('hex')

    const checkStartedAt = performance.now()
    const checkStart = threadCpuSeconds()
    for (const bytes of sealed) {
      if (crc32c(bytes, BATCH.ATTRIBUTES) !== bytes.readUInt32BE(BATCH.CRC))
        throw new SqueezeError(ErrorCodes.BATCH_CORRUPT, `${formatCodecSpec(task.spec)}: a sealed batch fails its CRC`)
    }
    const checkCpuSeconds = threadCpuSeconds() - checkStart
    const checkSeconds = (performance.now() - checkStartedAt) / 1000
    if (same && task.walk !== true) {
      return {
        records: task.slots.reduce((n, s) => n + s.count, 0),
        decompressCpuSeconds,
        decodeCpuSeconds: checkCpuSeconds,
        readSeconds: checkSeconds,
        mismatch
      }
    }

    const { records, ...walk } = walkBatches(readable, format)
    return {
      records,
      decompressCpuSeconds,
      decodeCpuSeconds: checkCpuSeconds + walk.cpuSeconds,
      readSeconds: checkSeconds + walk.seconds,
      mismatch,
      walk
    }
  }

  /** codec:adaptive: the target's replay, fed this chunk's batches; null for a fixed level. */
  private replayFor(task: ProjectionTask): AdaptiveReplay | null {
    if (!isAdaptive(task.spec) || task.adaptive === undefined) return null
    let replay = this.replays.get(task.adaptive.replayKey)
    if (replay === undefined) {
      replay = new AdaptiveReplay(task.spec, task.adaptive.lingerMs, task.adaptive.level)
      this.replays.set(task.adaptive.replayKey, replay)
    }
    replay.next(task.slots)
    return replay
  }

  /** Drops a finished projection's replay: a thread serves many projections, and the map would only grow. */
  release(replayKey: string): void {
    this.replays.delete(replayKey)
  }

  /** Replays held: for checking that finished projections leave none behind. */
  get replayCount(): number {
    return this.replays.size
  }

  private codecFor(spec: CodecSpec): Codec {
    const key = formatCodecSpec(spec)
    let codec = this.codecs.get(key)
    if (codec === undefined) {
      codec = createCodec(spec)
      this.codecs.set(key, codec)
    }
    return codec
  }
}

/** Reads every record of the batches, decoding each value when a format is given: the consumer's work, timed. */
function walkBatches(
  readable: readonly Buffer[],
  format: LogFormat | null
): { records: number; cpuSeconds: number; seconds: number } {
  const decodeAt = format === null ? null : rangeDecoder(format)
  let records = 0
  const walkStartedAt = performance.now()
  const walkStart = threadCpuSeconds()
  for (const bytes of readable) {
    const batch = readBatch(bytes, { verifyCrc: false })
    records += batch.recordCount
    if (decodeAt !== null) {
      batch.forEachValue((b, start, end) => {
        try {
          decodeAt(b, start, end)
        } catch {
          // Counted by the copy mode's consumer; here a value that does not decode costs what it cost.
        }
      })
    }
  }
  return {
    records,
    cpuSeconds: threadCpuSeconds() - walkStart,
    seconds: (performance.now() - walkStartedAt) / 1000
  }
}
