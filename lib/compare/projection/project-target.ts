import { createHash } from 'node:crypto'
import { CODEC_IDS, codecCache, decoderForId, isAdaptive, type CodecSpec } from '../../codecs/index.js'
import { formatFor, type LogKind } from '../../formats/index.js'
import { threadCpuSeconds } from '../../metrics/thread-cpu.js'
import { BATCH } from '../../protocol/batch-layout.js'
import { NON_IDEMPOTENT, sealRecords, stampProducerState } from '../../protocol/record-batch-builder.js'
import { readBatch } from '../../protocol/record-batch-reader.js'
import { AdaptiveReplay } from './adaptive-replay.js'

/** Where each uncompressed batch sits in the shared buffer, and the header fields it needs. */
export interface BatchSlot {
  readonly partition: number
  readonly start: number
  readonly end: number
  readonly count: number
  readonly firstTimestamp: number
  readonly maxTimestamp: number
}

/** One target over one batching: the batches' records live in `data`, shared by every thread without a copy. */
export interface ProjectionTask {
  readonly spec: CodecSpec
  /** Decode every value as this log kind while reading back; null reads bytes only. */
  readonly format: LogKind | null
  readonly data: SharedArrayBuffer
  readonly slots: readonly BatchSlot[]
  /** Read every batch back (consumer CPU, digest); a batching what-if needs sizes only. */
  readonly readBack: boolean
  /** linger.ms the batches were made with: codec:adaptive's replay counts waits beyond it as missed deadlines. */
  readonly lingerMs: number
}

/** What compressing every batch, and reading each back as a consumer would, measured for one target. */
export interface TargetProjection {
  readonly batches: number
  readonly records: number
  readonly uncompressedBytes: number
  /** Bytes of the sealed batches: what the broker stores, since it keeps a producer's batches as they are. */
  readonly storedBytes: number
  /** Stored bytes per batch, in slot order: what the confidence interval resamples. */
  readonly batchStoredBytes: readonly number[]
  /** Stored bytes per source partition, as DescribeLogDirs would report them for a copy. */
  readonly storedBytesByPartition: Readonly<Record<number, number>>
  readonly compressCpuSeconds: number
  readonly decompressCpuSeconds: number
  /** Walking the records and decoding their values, decompression left out. */
  readonly decodeCpuSeconds: number
  readonly readSeconds: number
  /** sha256 of every batch's records as read back, in order: equal across targets when every codec round-tripped. */
  readonly digest: string
  /** codec:adaptive: the level each batch was sealed at, in slot order. */
  readonly levels?: readonly number[]
}

/**
 * Seals every batch with the producer's own sealRecords and reads it back in memory. Each cost is measured
 * over a whole pass with this thread's CPU clock (process.cpuUsage would count the other targets' threads, and
 * the thread clock only ticks every few ms, so per-batch readings would not add up): compress all, decompress
 * all, then read and decode all (minus the decompression pass). The digest pass is not timed.
 */
export function projectTarget(task: ProjectionTask): TargetProjection {
  const codecFor = codecCache()
  const codecId = CODEC_IDS[task.spec.codec]
  const replay = isAdaptive(task.spec) ? new AdaptiveReplay(task.spec, task.slots, task.lingerMs) : null
  const format = task.format === null ? null : formatFor(task.format)
  const shared = new Uint8Array(task.data)
  // Codecs get an ordinary buffer: not every native binding takes memory a SharedArrayBuffer backs.
  let scratch = Buffer.allocUnsafe(1024 * 1024)
  const sealed: Buffer[] = new Array<Buffer>(task.slots.length)
  const compressStart = threadCpuSeconds()
  // An adaptive target seals in the order the batches closed, each at the level its replay picks by then.
  const order = replay?.order ?? task.slots.map((_, i) => i)
  for (const [position, index] of order.entries()) {
    const slot = task.slots[index] as BatchSlot
    const length = slot.end - slot.start
    if (length > scratch.length) scratch = Buffer.allocUnsafe(length)
    scratch.set(shared.subarray(slot.start, slot.end))
    const spec = replay?.spec ?? task.spec
    const startedAt = performance.now()
    const batch = sealRecords({ records: scratch.subarray(0, length), count: slot.count, firstTimestamp: slot.firstTimestamp, maxTimestamp: slot.maxTimestamp }, codecFor(spec), Buffer.allocUnsafe)
    replay?.sealed(position, spec, (performance.now() - startedAt) / 1000)
    // A copy: the 'none' codec's output is a view of the scratch buffer.
    const bytes = codecId === 0 ? Buffer.from(batch.bytes) : batch.bytes
    stampProducerState(bytes, NON_IDEMPOTENT)
    sealed[index] = bytes
  }
  const compressCpuSeconds = threadCpuSeconds() - compressStart
  const batchStoredBytes = sealed.map((b) => b.length)
  const storedBytesByPartition: Record<number, number> = {}
  task.slots.forEach((slot, i) => {
    storedBytesByPartition[slot.partition] = (storedBytesByPartition[slot.partition] ?? 0) + (batchStoredBytes[i] as number)
  })
  const sizes = {
    batches: sealed.length,
    uncompressedBytes: task.slots.reduce((n, s) => n + BATCH.HEADER_BYTES + s.end - s.start, 0),
    storedBytes: batchStoredBytes.reduce((a, b) => a + b, 0),
    batchStoredBytes,
    storedBytesByPartition,
    compressCpuSeconds,
    ...(replay === null ? {} : { levels: replay.levels })
  }
  if (!task.readBack) return { ...sizes, records: task.slots.reduce((n, s) => n + s.count, 0), decompressCpuSeconds: 0, decodeCpuSeconds: 0, readSeconds: 0, digest: '' }

  const decoder = decoderForId(codecId)
  const decompressStart = threadCpuSeconds()
  if (codecId !== 0 && decoder !== undefined) {
    for (const bytes of sealed) {
      const written = decoder.decompressInto?.(bytes.subarray(BATCH.HEADER_BYTES), scratch) ?? -1
      if (written < 0) decoder.decompress(bytes.subarray(BATCH.HEADER_BYTES))
    }
  }
  const decompressCpuSeconds = threadCpuSeconds() - decompressStart

  let records = 0
  const readStartedAt = performance.now()
  const readStart = threadCpuSeconds()
  for (const bytes of sealed) {
    const batch = readBatch(bytes, { verifyCrc: true, into: scratch })
    if (batch.uncompressedBytes > scratch.length) scratch = Buffer.allocUnsafe(batch.uncompressedBytes)
    records += batch.recordCount
    if (format !== null) {
      const decodeAt = format.decodeAt?.bind(format) ?? ((b: Buffer, start: number, end: number) => format.decode(b.subarray(start, end)))
      batch.forEachValue((b, start, end) => {
        try {
          decodeAt(b, start, end)
        } catch {
          // Counted by the copy mode's consumer; here a value that does not decode costs what it cost.
        }
      })
    }
  }
  const readCpuSeconds = threadCpuSeconds() - readStart
  const readSeconds = Math.max((performance.now() - readStartedAt) / 1000, 1e-6)

  const hash = createHash('sha256')
  for (const bytes of sealed) {
    const body = bytes.subarray(BATCH.HEADER_BYTES)
    hash.update(codecId === 0 || decoder === undefined ? body : decoder.decompress(body))
  }
  return {
    ...sizes,
    records,
    decompressCpuSeconds,
    decodeCpuSeconds: Math.max(0, readCpuSeconds - decompressCpuSeconds),
    readSeconds,
    digest: hash.digest('hex')
  }
}
