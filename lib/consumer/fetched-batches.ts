import { ErrorCodes, SqueezeError } from '../errors.js'
import type { BatchSkipReason } from '../metrics/reader-metrics.js'
import { BATCH } from '../protocol/batch-layout.js'

/** One stored batch of a fetch answer, with the offsets its header gives. */
export interface FetchedBatch {
  readonly bytes: Buffer
  readonly baseOffset: number
  readonly lastOffset: number
}

/** A batch whose framing cannot be trusted, and the offsets to skip: the next read starts at lastOffset + 1. */
export interface CorruptFraming {
  readonly baseOffset: number
  readonly lastOffset: number
  readonly error: SqueezeError
}

export interface FetchedBatches {
  readonly batches: readonly FetchedBatch[]
  /** The batch the walk stopped at because its length or offsets are corrupt; nothing after it is read. */
  readonly corrupt: CorruptFraming | null
}

export interface SplitLimits {
  /** The offset the fetch asked for: the first batch holds it, every later one starts after the one before. */
  readonly from: number
  /**
   * The partition's high watermark from the same answer (-1 when unknown). The broker takes it before it reads the
   * log, and the read itself stops at the high watermark of that later moment, so batches may end past it; only a
   * batch that starts past it after a gap in the offsets is implausible.
   */
  readonly highWatermark: number
  /** The largest stored batch a reader takes: a longer declared length is corruption, not a batch to wait for. */
  readonly maxBatchBytes: number
}

/**
 * Cuts one partition's fetched record set into whole batches without decoding them. The length field sits outside
 * the CRC-checked region, so a corrupt one is caught here by its bounds, and so is the base offset: one that goes
 * backwards, or that leaves a gap and starts past the high watermark (offsets have gaps only where compaction removed
 * records, far below it). Such a batch ends the walk with its offsets (the header's when they are plausible, else
 * the fetch position, so the reader moves on by one offset and never fetches the same bytes forever). A short tail
 * is a batch the broker cut at max bytes, left for the next fetch.
 */
export function splitFetched(data: Buffer, limits: SplitLimits): FetchedBatches {
  const batches: FetchedBatch[] = []
  let expected = limits.from
  let at = 0
  while (at + BATCH.HEADER_BYTES <= data.length) {
    const baseOffset = Number(data.readBigInt64BE(at + BATCH.BASE_OFFSET))
    const lastOffset = baseOffset + data.readInt32BE(at + BATCH.LAST_OFFSET_DELTA)
    const inOrder =
      lastOffset >= baseOffset && lastOffset >= expected && (batches.length === 0 || baseOffset >= expected)
    const gapPastEnd = limits.highWatermark >= 0 && baseOffset > Math.max(expected, limits.highWatermark)
    if (!inOrder || gapPastEnd) {
      // After a good batch, the fetch position is already past it: the next fetch reads whatever lies there anew.
      if (batches.length > 0) break
      const error = corrupt(
        `batch at byte ${at} gives offsets ${baseOffset}..${lastOffset}, ` +
          `not after offset ${expected} (high watermark ${limits.highWatermark})`
      )
      return { batches, corrupt: { baseOffset: expected, lastOffset: expected, error } }
    }
    const length = data.readInt32BE(at + BATCH.LENGTH)
    const total = BATCH.LOG_OVERHEAD + length
    if (length < BATCH.HEADER_BYTES - BATCH.LOG_OVERHEAD || total > limits.maxBatchBytes) {
      const most = limits.maxBatchBytes - BATCH.LOG_OVERHEAD
      const error = corrupt(
        `batch at offsets ${baseOffset}..${lastOffset} declares length ${length} (at most ${most} is read)`
      )
      return { batches, corrupt: { baseOffset, lastOffset, error } }
    }
    if (at + total > data.length) break
    batches.push({ bytes: data.subarray(at, at + total), baseOffset, lastOffset })
    expected = lastOffset + 1
    at += total
  }
  return { batches, corrupt: null }
}

function corrupt(message: string): SqueezeError {
  return new SqueezeError(ErrorCodes.BATCH_FRAMING, `corrupt batch framing: ${message}`)
}

/** The skip reason a batch's read error stands for. */
export function skipReason(error: SqueezeError): BatchSkipReason {
  if (error.code === ErrorCodes.CODEC_OUTPUT_LIMIT) return 'uncompressed_limit'
  return error.code === ErrorCodes.BATCH_FRAMING ? 'framing' : 'corrupt'
}
