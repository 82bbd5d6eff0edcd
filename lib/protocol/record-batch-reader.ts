import { decoderForId } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { processCpuSeconds } from '../metrics/thread-cpu.js'
import { ATTRIBUTE, BATCH } from './batch-layout.js'
import { crc32c } from './crc32c.js'
import type { OpenBatch } from './record-batch-builder.js'
import type { IncomingRecord, RawRecords, RecordHeader } from './record.js'
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
  /** Records at or after `fromOffset`: how many, without building them. */
  readonly recordCount: number
  /** The records as objects, built on first use (the framing was checked when the batch was read). */
  readonly records: readonly IncomingRecord[]
  /**
   * Each record's value as a range of `bytes` (null values skipped), in order, without building record
   * objects or views: the consumer's per-record path.
   */
  forEachValue(visit: (bytes: Buffer, start: number, end: number, offset: number) => void, done?: Uint8Array): void
  /**
   * Every record's value as a row of one table, records before `fromOffset` included: for a format that reads all
   * of them in one call (LogFormat.decodeValues) and hands forEachValue the rows it has read as `done`.
   */
  readonly values: ValueTable
  /** The records as byte ranges of the batch, built on first use: the copier's path, which copies them undecoded. */
  readonly raw: RawRecords
  /**
   * The records section whole, as decompressed, with the header fields a new batch of it needs: a copy that keeps
   * the batch's boundaries compresses it again as it is. Null where those bytes would not read back the same in
   * another batch: a control batch, LogAppendTime (the broker's time, not the records'), records left out before
   * `fromOffset`, or offset deltas other than 0..n-1 (compaction's gaps, which a broker rebuilds or rejects).
   */
  readonly whole: OpenBatch | null
  readonly decompressCpuSeconds: number
}

export interface ReadOptions {
  /** Verify each batch's CRC-32C, as the Java consumer's check.crcs does by default. */
  verifyCrc?: boolean
  /** Leave out records before this offset (a fetch from the middle of a batch returns all of it). */
  fromOffset?: number
  /**
   * Decompress into this buffer when the codec can and the batch fits: the batch (its records, values) is then
   * valid only until `into` is used again.
   */
  into?: Buffer
  /**
   * The most a batch's records section may decompress to (squeeze.max.batch.uncompressed.bytes); past it the batch
   * is refused with CODEC_OUTPUT_LIMIT. The codecs' own default when left out.
   */
  maxUncompressedBytes?: number
  /** The clock decompressCpuSeconds is read on: the process's by default; a reader beside busy threads passes its own thread's. */
  cpuSeconds?: () => number
}

function corrupt(message: string, cause?: unknown): SqueezeError {
  return new SqueezeError(ErrorCodes.BATCH_CORRUPT, message, { cause })
}

/**
 * Cuts a record set into whole batches without decoding them, so one corrupt batch can be skipped alone. A fetch
 * response may end with a partial batch (the broker cuts at max bytes); it is left for the next fetch, which is why
 * this stops quietly at a short tail.
 */
export function splitBatches(data: Buffer): Buffer[] {
  const batches: Buffer[] = []
  let offset = 0
  while (offset + BATCH.HEADER_BYTES <= data.length) {
    const batchLength = data.readInt32BE(offset + BATCH.LENGTH)
    const total = BATCH.LOG_OVERHEAD + batchLength
    if (batchLength < BATCH.HEADER_BYTES - BATCH.LOG_OVERHEAD)
      throw corrupt(`batch at byte ${offset} declares length ${batchLength}`)
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

const CONTROL_TYPE_ABORT = 0

/**
 * Whether a control batch is a transaction's abort marker (control record type 0) rather than its commit (1).
 * Control batches are never compressed; their one record's key is version (int16) then type (int16).
 */
export function isAbortMarker(batch: Buffer): boolean {
  if ((batch.readInt16BE(BATCH.ATTRIBUTES) & ATTRIBUTE.CONTROL) === 0) return false
  const cursor: Cursor = { offset: BATCH.HEADER_BYTES }
  readZigzag(batch, cursor) // record length
  cursor.offset++ // record attributes
  readZigzag(batch, cursor) // timestamp delta
  readZigzag(batch, cursor) // offset delta
  const keyLength = readZigzag(batch, cursor)
  if (keyLength < 4 || cursor.offset + 4 > batch.length)
    throw corrupt(`control batch at offset ${batchOffsets(batch).baseOffset} has a ${keyLength}-byte key`)
  return batch.readInt16BE(cursor.offset + 2) === CONTROL_TYPE_ABORT
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
  const baseTimestamp = Number(
    batch.readBigInt64BE(
      (attributes & ATTRIBUTE.TIMESTAMP_LOG_APPEND) !== 0 ? BATCH.MAX_TIMESTAMP : BATCH.BASE_TIMESTAMP
    )
  )
  const logAppendTime = (attributes & ATTRIBUTE.TIMESTAMP_LOG_APPEND) !== 0
  const count = batch.readInt32BE(BATCH.RECORD_COUNT)
  const isControl = (attributes & ATTRIBUTE.CONTROL) !== 0

  let body = batch.subarray(BATCH.HEADER_BYTES)
  let decompressCpuSeconds = 0
  if (codecId !== 0) {
    const codec = decoderForId(codecId)
    if (codec === undefined) throw corrupt(`record batch uses unknown codec id ${codecId}`)
    const cpuSeconds = options.cpuSeconds ?? processCpuSeconds
    const before = cpuSeconds()
    const limit = options.maxUncompressedBytes
    try {
      // The reused buffer is no bigger than the cap allows, so a batch decompressed into it is within the cap too.
      const whole = limit === undefined || options.into === undefined || options.into.length <= limit
      const into = whole ? options.into : options.into?.subarray(0, limit)
      const written = into !== undefined && codec.decompressInto !== undefined ? codec.decompressInto(body, into) : -1
      body = written >= 0 && into !== undefined ? into.subarray(0, written) : codec.decompress(body, limit)
    } catch (err) {
      const overCap = err instanceof SqueezeError && err.code === ErrorCodes.CODEC_OUTPUT_LIMIT
      const hint = overCap ? ' (raise squeeze.max.batch.uncompressed.bytes if the batch is genuine)' : ''
      const message = `cannot ${codec.name}-decompress batch at offset ${baseOffset}: ${(err as Error).message}${hint}`
      throw new SqueezeError(overCap ? ErrorCodes.CODEC_OUTPUT_LIMIT : ErrorCodes.CODEC_CORRUPT, message, {
        cause: err
      })
    }
    decompressCpuSeconds = Math.max(0, cpuSeconds() - before)
  }
  // The framing of every record is checked now (a corrupt batch fails here, as a whole); objects come later.
  const layout = isControl ? EMPTY_LAYOUT : recordLayout(body, count, baseOffset)
  return new DecodedBatch(
    {
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
      decompressCpuSeconds
    },
    body,
    layout,
    baseTimestamp,
    logAppendTime,
    options.fromOffset ?? Number.NEGATIVE_INFINITY,
    Number(batch.readBigInt64BE(BATCH.MAX_TIMESTAMP))
  )
}

/**
 * A batch's record values as rows of `table`: row i's value is `bytes[table[i * stride + startColumn],
 * table[i * stride + startColumn + 1])`, or null where that start is -1.
 */
export interface ValueTable {
  readonly bytes: Buffer
  readonly table: Int32Array
  readonly count: number
  readonly stride: number
  readonly startColumn: number
}

/** A batch's header fields and read costs, without its records (or the memory they live in). */
export type BatchHeader = Omit<ReadBatch, 'records' | 'recordCount' | 'forEachValue' | 'values' | 'raw' | 'whole'>

/** The header of `batch` as a plain object, for keeping after the batch itself is gone. */
export function batchHeader(batch: ReadBatch): BatchHeader {
  const {
    baseOffset,
    lastOffset,
    codecId,
    storedBytes,
    uncompressedBytes,
    isControl,
    isTransactional,
    producerId,
    baseSequence,
    crc,
    decompressCpuSeconds
  } = batch
  return {
    baseOffset,
    lastOffset,
    codecId,
    storedBytes,
    uncompressedBytes,
    isControl,
    isTransactional,
    producerId,
    baseSequence,
    crc,
    decompressCpuSeconds
  }
}

/** Per record: offset delta, where the record starts, where its value starts and ends (-1 for null). */
interface RecordLayout {
  readonly count: number
  readonly table: Int32Array
}

const EMPTY_LAYOUT: RecordLayout = { count: 0, table: new Int32Array(0) }
const OFFSET_DELTA = 0
const RECORD_START = 1
const VALUE_START = 2
const VALUE_END = 3
const COLUMNS = 4

// The header fields come in as one object (declaration merging types them on the class).
interface DecodedBatch extends BatchHeader {}

class DecodedBatch implements ReadBatch {
  readonly recordCount: number
  private built: IncomingRecord[] | null = null
  private rawBuilt: RawRecords | null = null

  constructor(
    fields: BatchHeader,
    private readonly body: Buffer,
    private readonly layout: RecordLayout,
    private readonly baseTimestamp: number,
    private readonly logAppendTime: boolean,
    private readonly fromOffset: number,
    private readonly maxTimestamp: number
  ) {
    Object.assign(this, fields)
    let visible = 0
    for (let i = 0; i < layout.count; i++)
      if (this.baseOffset + (layout.table[i * COLUMNS + OFFSET_DELTA] as number) >= fromOffset) visible++
    this.recordCount = visible
  }

  get records(): readonly IncomingRecord[] {
    this.built ??= this.build()
    return this.built
  }

  forEachValue(visit: (bytes: Buffer, start: number, end: number, offset: number) => void, done?: Uint8Array): void {
    const { table, count } = this.layout
    for (let i = 0; i < count; i++) {
      if (done !== undefined && done[i] === 1) continue
      const row = i * COLUMNS
      const offset = this.baseOffset + (table[row + OFFSET_DELTA] as number)
      const start = table[row + VALUE_START] as number
      if (offset < this.fromOffset || start < 0) continue
      visit(this.body, start, table[row + VALUE_END] as number, offset)
    }
  }

  get values(): ValueTable {
    const { table, count } = this.layout
    // VALUE_END follows VALUE_START, as a ValueTable's row has it.
    return { bytes: this.body, table, count, stride: COLUMNS, startColumn: VALUE_START }
  }

  get raw(): RawRecords {
    this.rawBuilt ??= this.buildRaw()
    return this.rawBuilt
  }

  get whole(): OpenBatch | null {
    const { table, count } = this.layout
    if (this.isControl || this.logAppendTime || count === 0 || this.recordCount !== count) return null
    for (let i = 0; i < count; i++) if (table[i * COLUMNS + OFFSET_DELTA] !== i) return null
    if (this.lastOffset - this.baseOffset !== count - 1) return null
    return { records: this.body, count, firstTimestamp: this.baseTimestamp, maxTimestamp: this.maxTimestamp }
  }

  private buildRaw(): RawRecords {
    const { table, count: all } = this.layout
    const count = this.recordCount
    const raw = {
      count,
      bytes: this.body,
      offsets: new Float64Array(count),
      timestamps: new Float64Array(count),
      starts: new Int32Array(count),
      ends: new Int32Array(count),
      dataBytes: new Int32Array(count)
    }
    const body = this.body
    const cursor: Cursor = { offset: 0 }
    let n = 0
    for (let i = 0; i < all; i++) {
      const offset = this.baseOffset + (table[i * COLUMNS + OFFSET_DELTA] as number)
      if (offset < this.fromOffset) continue
      cursor.offset = table[i * COLUMNS + RECORD_START] as number
      const length = readZigzag(body, cursor)
      const end = cursor.offset + length
      cursor.offset += 1 // attributes
      const timestampDelta = readZigzag(body, cursor)
      readZigzag(body, cursor) // offset delta
      raw.offsets[n] = offset
      raw.timestamps[n] = this.logAppendTime ? this.baseTimestamp : this.baseTimestamp + timestampDelta
      raw.starts[n] = cursor.offset
      raw.ends[n] = end
      // Key, value, then each header's key and value: lengths recordLayout already checked.
      let data = fieldLength(body, cursor) + fieldLength(body, cursor)
      for (let h = readZigzag(body, cursor); h > 0; h--) data += fieldLength(body, cursor) + fieldLength(body, cursor)
      raw.dataBytes[n++] = data
    }
    return raw
  }

  private build(): IncomingRecord[] {
    const records: IncomingRecord[] = []
    const cursor: Cursor = { offset: 0 }
    for (let i = 0; i < this.layout.count; i++) {
      cursor.offset = this.layout.table[i * COLUMNS + RECORD_START] as number
      const record = readRecord(this.body, cursor, this.baseOffset, this.baseTimestamp, this.logAppendTime)
      if (record.offset >= this.fromOffset) records.push(record)
    }
    return records
  }
}

/**
 * Walks every record's framing (lengths, varints, key, value, headers) and notes where each starts and where
 * its value lies. Throws a corrupt-batch error on anything that does not add up.
 */
function recordLayout(body: Buffer, count: number, baseOffset: number): RecordLayout {
  // Every record takes at least 7 bytes, so a larger count is corruption, not a reason to allocate.
  if (count < 0 || count * 7 > body.length)
    throw corrupt(`record batch at offset ${baseOffset} claims ${count} records in ${body.length} bytes`)
  const table = new Int32Array(count * COLUMNS)
  const cursor: Cursor = { offset: 0 }
  try {
    for (let i = 0; i < count; i++) {
      const row = i * COLUMNS
      table[row + RECORD_START] = cursor.offset
      const length = readZigzag(body, cursor)
      const recordEnd = cursor.offset + length
      cursor.offset += 1 // attributes
      readZigzag(body, cursor) // timestamp delta
      table[row + OFFSET_DELTA] = readZigzag(body, cursor)
      skipBytes(body, cursor)
      const valueLength = readZigzag(body, cursor)
      if (valueLength >= 0) {
        if (cursor.offset + valueLength > body.length)
          throw corrupt(`record field of ${valueLength} bytes runs past the batch`)
        table[row + VALUE_START] = cursor.offset
        cursor.offset += valueLength
        table[row + VALUE_END] = cursor.offset
      } else {
        table[row + VALUE_START] = -1
        table[row + VALUE_END] = -1
      }
      const headerCount = readZigzag(body, cursor)
      for (let h = 0; h < headerCount; h++) {
        skipBytes(body, cursor)
        skipBytes(body, cursor)
      }
      if (cursor.offset !== recordEnd)
        throw corrupt(`record ${i} declares ${length} bytes but holds ${cursor.offset - recordEnd + length}`)
    }
  } catch (err) {
    if (err instanceof SqueezeError) throw err
    throw corrupt(`record batch at offset ${baseOffset} is truncated: ${(err as Error).message}`, err)
  }
  return { count, table }
}

function skipBytes(body: Buffer, cursor: Cursor): void {
  const length = readZigzag(body, cursor)
  if (length < 0) return
  if (cursor.offset + length > body.length) throw corrupt(`record field of ${length} bytes runs past the batch`)
  cursor.offset += length
}

/** Skips a length-prefixed field; its length, 0 for null. */
function fieldLength(body: Buffer, cursor: Cursor): number {
  const length = readZigzag(body, cursor)
  if (length <= 0) return 0
  cursor.offset += length
  return length
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

/** One record at `cursor` (its framing already checked by recordLayout). */
function readRecord(
  body: Buffer,
  cursor: Cursor,
  baseOffset: number,
  baseTimestamp: number,
  logAppendTime: boolean
): IncomingRecord {
  readZigzag(body, cursor) // length
  cursor.offset += 1 // attributes
  const timestampDelta = readZigzag(body, cursor)
  const offsetDelta = readZigzag(body, cursor)
  return readFields(
    body,
    cursor,
    baseOffset + offsetDelta,
    logAppendTime ? baseTimestamp : baseTimestamp + timestampDelta
  )
}

/**
 * Record `index` of `raw` as an object in memory of its own, which outlives `raw`'s (a reader may decompress the
 * next batch over it): a refused copy, kept for the dead-letter topic and the logs.
 */
export function rawRecordAt(raw: RawRecords, index: number): IncomingRecord {
  const fields = Buffer.from(raw.bytes.subarray(raw.starts[index], raw.ends[index]))
  return readFields(fields, { offset: 0 }, raw.offsets[index] as number, raw.timestamps[index] as number)
}

/** A record's key, value and headers at `cursor`. */
function readFields(body: Buffer, cursor: Cursor, offset: number, timestamp: number): IncomingRecord {
  const key = readBytes(body, cursor)
  const value = readBytes(body, cursor)
  const headerCount = readZigzag(body, cursor)
  const headers: RecordHeader[] = []
  for (let h = 0; h < headerCount; h++) {
    const headerKey = readBytes(body, cursor)
    headers.push({ key: headerKey === null ? '' : headerKey.toString('utf8'), value: readBytes(body, cursor) })
  }
  return { offset, timestamp, key, value, headers }
}

/** Inner offset deltas a broker would accept without rebuilding the batch: exactly 0..n-1. */
export function innerOffsetsAreSequential(batch: ReadBatch): boolean {
  return batch.records.every((record, index) => record.offset - batch.baseOffset === index)
}
