import { decoderForId } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { ATTRIBUTE, BATCH } from './batch-layout.js'
import { crc32c } from './crc32c.js'
import type { IncomingRecord, RecordHeader } from './record.js'
import { readZigzag, type Cursor } from './varint.js'

/** One batch as it sat in the log, with its records and what reading it cost. */
export interface ReadBatch {
  readonly baseOffset: number
  readonly lastOffset: number
  readonly codecId: number
  /** Bytes of the whole batch as stored and fetched (log overhead included). */
  readonly storedBytes: number
  /** Bytes of the records section once decompressed, plus the batch header: the batch's uncompressed size. */
  readonly uncompressedBytes: number
  readonly isControl: boolean
  readonly isTransactional: boolean
  readonly producerId: bigint
  readonly baseSequence: number
  /** The stored CRC-32C: equal to the producer's only if the broker kept the batch byte for byte. */
  readonly crc: number
  readonly records: readonly IncomingRecord[]
  readonly decompressCpuSeconds: number
}

export interface ReadOptions {
  /** Verify each batch's CRC-32C, as the Java consumer's check.crcs does by default. */
  verifyCrc?: boolean
}

function corrupt(message: string, cause?: unknown): SqueezeError {
  return new SqueezeError(ErrorCodes.BATCH_CORRUPT, message, { cause })
}

/**
 * Splits a fetched record set into batches. A fetch response may end with a partial batch (the broker cuts
 * at max bytes); it is left for the next fetch, which is why this stops quietly at a short tail.
 */
export function readBatches(data: Buffer, options: ReadOptions = {}): ReadBatch[] {
  return splitBatches(data).map((batch) => readBatch(batch, options))
}

/** Cuts a record set into whole batches without decoding them, so one corrupt batch can be skipped alone. */
export function splitBatches(data: Buffer): Buffer[] {
  const batches: Buffer[] = []
  let offset = 0
  while (offset + BATCH.HEADER_BYTES <= data.length) {
    const batchLength = data.readInt32BE(offset + BATCH.LENGTH)
    const total = BATCH.LOG_OVERHEAD + batchLength
    if (batchLength < BATCH.HEADER_BYTES - BATCH.LOG_OVERHEAD) throw corrupt(`batch at byte ${offset} declares length ${batchLength}`)
    if (offset + total > data.length) break
    batches.push(data.subarray(offset, offset + total))
    offset += total
  }
  return batches
}

/** Offsets a batch covers, read from its header alone (valid even when the body is corrupt). */
export function batchOffsets(batch: Buffer): { baseOffset: number; lastOffset: number } {
  const baseOffset = Number(batch.readBigInt64BE(BATCH.BASE_OFFSET))
  return { baseOffset, lastOffset: baseOffset + batch.readInt32BE(BATCH.LAST_OFFSET_DELTA) }
}

export function readBatch(batch: Buffer, options: ReadOptions = {}): ReadBatch {
  const magic = batch.readInt8(BATCH.MAGIC)
  if (magic !== 2) throw corrupt(`record batch magic ${magic} is not supported (only v2, Kafka 0.11+)`)
  if (options.verifyCrc !== false) {
    const expected = batch.readUInt32BE(BATCH.CRC)
    const actual = crc32c(batch, BATCH.ATTRIBUTES)
    if (expected !== actual) throw corrupt(`record batch CRC mismatch: stored ${expected}, computed ${actual}`)
  }
  const baseOffset = Number(batch.readBigInt64BE(BATCH.BASE_OFFSET))
  const attributes = batch.readInt16BE(BATCH.ATTRIBUTES)
  const codecId = attributes & ATTRIBUTE.CODEC_MASK
  const lastOffsetDelta = batch.readInt32BE(BATCH.LAST_OFFSET_DELTA)
  // With LogAppendTime the broker stamps only maxTimestamp; every record carries that time.
  const baseTimestamp = Number(batch.readBigInt64BE((attributes & ATTRIBUTE.TIMESTAMP_LOG_APPEND) !== 0 ? BATCH.MAX_TIMESTAMP : BATCH.BASE_TIMESTAMP))
  const logAppendTime = (attributes & ATTRIBUTE.TIMESTAMP_LOG_APPEND) !== 0
  const count = batch.readInt32BE(BATCH.RECORD_COUNT)
  const isControl = (attributes & ATTRIBUTE.CONTROL) !== 0

  let body = batch.subarray(BATCH.HEADER_BYTES)
  let decompressCpuSeconds = 0
  if (codecId !== 0) {
    const codec = decoderForId(codecId)
    if (codec === undefined) throw corrupt(`record batch uses unknown codec id ${codecId}`)
    const before = process.cpuUsage()
    try {
      body = codec.decompress(body)
    } catch (err) {
      throw new SqueezeError(ErrorCodes.CODEC_CORRUPT, `cannot ${codec.name}-decompress batch at offset ${baseOffset}: ${(err as Error).message}`, { cause: err })
    }
    const spent = process.cpuUsage(before)
    decompressCpuSeconds = (spent.user + spent.system) / 1e6
  }
  const records = isControl ? [] : readRecords(body, count, baseOffset, baseTimestamp, logAppendTime)
  return {
    baseOffset,
    lastOffset: baseOffset + lastOffsetDelta,
    codecId,
    storedBytes: batch.length,
    uncompressedBytes: BATCH.HEADER_BYTES + body.length,
    isControl,
    isTransactional: (attributes & ATTRIBUTE.TRANSACTIONAL) !== 0,
    producerId: batch.readBigInt64BE(BATCH.PRODUCER_ID),
    baseSequence: batch.readInt32BE(BATCH.BASE_SEQUENCE),
    crc: batch.readUInt32BE(BATCH.CRC),
    records,
    decompressCpuSeconds
  }
}

function readBytes(body: Buffer, cursor: Cursor): Buffer | null {
  const length = readZigzag(body, cursor)
  if (length < 0) return null
  const start = cursor.offset
  const end = start + length
  if (end > body.length) throw corrupt(`record field of ${length} bytes runs past the batch`)
  cursor.offset = end
  return body.subarray(start, end)
}

function readRecords(body: Buffer, count: number, baseOffset: number, baseTimestamp: number, logAppendTime: boolean): IncomingRecord[] {
  // Every record takes at least 7 bytes, so a larger count is corruption, not a reason to allocate.
  if (count < 0 || count * 7 > body.length) throw corrupt(`record batch at offset ${baseOffset} claims ${count} records in ${body.length} bytes`)
  const records: IncomingRecord[] = new Array(count)
  const cursor: Cursor = { offset: 0 }
  try {
    for (let i = 0; i < count; i++) {
      const length = readZigzag(body, cursor)
      const recordEnd = cursor.offset + length
      cursor.offset += 1 // attributes
      const timestampDelta = readZigzag(body, cursor)
      const offsetDelta = readZigzag(body, cursor)
      const key = readBytes(body, cursor)
      const value = readBytes(body, cursor)
      const headerCount = readZigzag(body, cursor)
      const headers: RecordHeader[] = []
      for (let h = 0; h < headerCount; h++) {
        const headerKey = readBytes(body, cursor)
        headers.push({ key: headerKey === null ? '' : headerKey.toString('utf8'), value: readBytes(body, cursor) })
      }
      if (cursor.offset !== recordEnd) throw corrupt(`record ${i} declares ${length} bytes but holds ${cursor.offset - recordEnd + length}`)
      records[i] = { offset: baseOffset + offsetDelta, timestamp: logAppendTime ? baseTimestamp : baseTimestamp + timestampDelta, key, value, headers }
    }
  } catch (err) {
    if (err instanceof SqueezeError) throw err
    throw corrupt(`record batch at offset ${baseOffset} is truncated: ${(err as Error).message}`, err)
  }
  return records
}

/** Inner offset deltas a broker would accept without rebuilding the batch: exactly 0..n-1. */
export function innerOffsetsAreSequential(batch: ReadBatch): boolean {
  return batch.records.every((record, index) => record.offset - batch.baseOffset === index)
}
