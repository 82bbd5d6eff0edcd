import type { Codec } from '../codecs/index.js'
import { processCpuSeconds } from '../metrics/thread-cpu.js'
import { ATTRIBUTE, BATCH } from './batch-layout.js'
import { crc32c } from './crc32c.js'
import type { OutgoingRecord, RecordHeader } from './record.js'
import { writeZigzag, zigzagSize } from './varint.js'

/** Identity of the producer writing a batch; -1 / -1 when idempotence is off. */
export interface BatchProducerState {
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly baseSequence: number
  readonly transactional: boolean
}

export const NON_IDEMPOTENT: BatchProducerState = {
  producerId: -1n,
  producerEpoch: -1,
  baseSequence: -1,
  transactional: false
}

/**
 * Writes a record's value into `buf` at `at`, every byte of it (the room holds whatever the buffer held before), and
 * returns the offset where the value ends. `view` is a DataView of the same memory (offsets relative to `buf`).
 */
export type ValueWriter<T> = (buf: Buffer, view: DataView, at: number, arg: T) => number

/** A closed batch, ready for the wire, with what it cost to make. */
export interface SealedBatch {
  readonly bytes: Buffer
  readonly recordCount: number
  /** Size of the batch had it not been compressed (header plus records). */
  readonly uncompressedBytes: number
  readonly compressCpuSeconds: number
  readonly firstTimestamp: number
}

function headersSize(headers: readonly RecordHeader[] | undefined): number {
  if (headers === undefined) return zigzagSize(0)
  let size = zigzagSize(headers.length)
  for (const header of headers) {
    const keyBytes = Buffer.byteLength(header.key)
    const valueBytes = header.value === null ? -1 : header.value.length
    size += zigzagSize(keyBytes) + keyBytes + zigzagSize(valueBytes) + Math.max(valueBytes, 0)
  }
  return size
}

/** A record's headers section as a batch holds it (count, then each key and value): written once, copied per record. */
export function encodeHeaders(headers: readonly RecordHeader[]): Buffer {
  const buf = Buffer.allocUnsafe(headersSize(headers))
  let at = writeZigzag(buf, 0, headers.length)
  for (const header of headers) {
    at = writeZigzag(buf, at, Buffer.byteLength(header.key))
    at += buf.write(header.key, at)
    at = writeZigzag(buf, at, header.value === null ? -1 : header.value.length)
    if (header.value !== null) at += header.value.copy(buf, at)
  }
  return buf
}

/**
 * Writes records straight into one buffer in Kafka's v2 record format, leaving room for the batch header.
 * Inner offsets are 0..n-1 (offsetDelta = index). The field report's Go client wrote other values and its
 * broker silently rebuilt and recompressed every batch; Kafka 4.1.1 still rebuilds such a batch when the topic's
 * codec differs, rejects it (UNKNOWN_SERVER_ERROR) when the codec matches, and stores an uncompressed one as is.
 */
export class RecordBatchBuilder {
  private buf: Buffer
  private end: number = BATCH.HEADER_BYTES
  private count = 0
  private firstTimestamp = 0
  private maxTimestamp = 0
  private readonly capacity: number
  private view: DataView = new DataView(new ArrayBuffer(0))
  private viewOf: Buffer | null = null

  /**
   * `capacity` is batch.size: the most uncompressed bytes (header included) a batch may hold. The buffer is
   * allocated at that size up front (it is what the producer's buffer.memory accounts for), or at
   * `initialBytes` for an unbounded builder. `allocate` lets the producer hand in recycled buffers.
   */
  constructor(
    capacity: number,
    initialBytes: number = capacity,
    private readonly allocate: (size: number) => Buffer = Buffer.allocUnsafe
  ) {
    this.capacity = Math.max(capacity, BATCH.HEADER_BYTES + 1)
    this.buf = allocate(Math.max(Math.min(initialBytes, this.capacity), BATCH.HEADER_BYTES + 1))
  }

  get recordCount(): number {
    return this.count
  }

  /** Uncompressed size so far, header included. */
  get sizeBytes(): number {
    return this.end
  }

  /** Appends a record unless it would overflow a non-empty batch; a lone record larger than the capacity still fits. */
  tryAppend(record: OutgoingRecord, timestamp: number): boolean {
    const keyLength = record.key === null ? -1 : record.key.length
    const valueLength = record.value === null ? -1 : record.value.length
    let at = this.beginRecord(
      timestamp,
      zigzagSize(keyLength) +
        Math.max(keyLength, 0) +
        zigzagSize(valueLength) +
        Math.max(valueLength, 0) +
        headersSize(record.headers)
    )
    if (at < 0) return false
    const buf = this.buf
    at = writeZigzag(buf, at, keyLength)
    // TypedArray.set, not Buffer.copy: copy() builds a view per call, which showed up in the producer's profile.
    if (record.key !== null) {
      buf.set(record.key, at)
      at += keyLength
    }
    at = writeZigzag(buf, at, valueLength)
    if (record.value !== null) {
      buf.set(record.value, at)
      at += valueLength
    }
    const headers = record.headers
    if (headers === undefined) {
      buf[at++] = 0 // zigzag(0): no headers
    } else {
      at = writeZigzag(buf, at, headers.length)
      for (const header of headers) {
        at = writeZigzag(buf, at, Buffer.byteLength(header.key))
        at += buf.write(header.key, at)
        at = writeZigzag(buf, at, header.value === null ? -1 : header.value.length)
        if (header.value !== null) {
          buf.set(header.value, at)
          at += header.value.length
        }
      }
    }
    this.endRecord(at, timestamp)
    return true
  }

  /**
   * Appends a record whose key, value and headers are `fields[start, end)`, encoded as a batch holds them
   * (RawRecords): the bytes tryAppend would write for them, so the batch is the same byte for byte.
   */
  tryAppendRaw(fields: Buffer, start: number, end: number, timestamp: number): boolean {
    const at = this.beginRecord(timestamp, end - start)
    if (at < 0) return false
    // copy(), not set(subarray()): a view per record and destination was most of what this cost.
    fields.copy(this.buf, at, start, end)
    this.endRecord(at + end - start, timestamp)
    return true
  }

  /**
   * Makes room for a record whose key, value and headers take `fieldsSize` bytes and writes what precedes them;
   * returns where they go, or -1 when the record would overflow a non-empty batch.
   */
  private beginRecord(timestamp: number, fieldsSize: number): number {
    if (this.count === 0) this.firstTimestamp = timestamp
    const timestampDelta = timestamp - this.firstTimestamp
    const bodySize = 1 + zigzagSize(timestampDelta) + zigzagSize(this.count) + fieldsSize
    const recordSize = zigzagSize(bodySize) + bodySize
    if (this.end + recordSize > this.capacity && this.count > 0) return -1
    if (this.end + recordSize > this.buf.length)
      this.grow(Math.max(this.end + recordSize, Math.min(this.buf.length * 2, this.capacity)))
    const buf = this.buf
    let at = writeZigzag(buf, this.end, bodySize)
    buf[at++] = 0 // record attributes: unused
    at = writeZigzag(buf, at, timestampDelta)
    return writeZigzag(buf, at, this.count)
  }

  private endRecord(end: number, timestamp: number): void {
    this.end = end
    this.count++
    if (timestamp > this.maxTimestamp || this.count === 1) this.maxTimestamp = timestamp
  }

  /**
   * Appends a keyless record whose value `write` puts straight into the batch (a binary format's writer): no Buffer
   * and no copy per record. `headers` is the record's headers section as encodeHeaders wrote it (none without). `write` gets room of `maxValueBytes` at `at` (of `buf`, and
   * `view` over the same bytes) and returns where the value ends. The record is laid out for the bound's length
   * prefixes; in the rare case the value's own are shorter, the value moves back by the difference. False as
   * tryAppend, judged by the bound.
   */
  tryAppendWritten<T>(
    maxValueBytes: number,
    timestamp: number,
    write: ValueWriter<T>,
    arg: T,
    headers?: Buffer
  ): boolean {
    if (this.count === 0) this.firstTimestamp = timestamp
    const timestampDelta = timestamp - this.firstTimestamp
    const headersSize = headers === undefined ? 1 : headers.length
    // attributes, timestamp delta, offset delta, key length -1; after the value, the headers (or 0 of them)
    const fixedSize = 1 + zigzagSize(timestampDelta) + zigzagSize(this.count) + 1 + headersSize
    const maxBody = fixedSize + zigzagSize(maxValueBytes) + maxValueBytes
    const maxSize = zigzagSize(maxBody) + maxBody
    if (this.end + maxSize > this.capacity && this.count > 0) return false
    if (this.end + maxSize > this.buf.length)
      this.grow(Math.max(this.end + maxSize, Math.min(this.buf.length * 2, this.capacity)))
    const buf = this.buf
    if (this.viewOf !== buf) {
      // The first buffer this method writes to, or a bigger one.
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.length)
      this.viewOf = buf
    }
    const reservedAt = this.end + zigzagSize(maxBody) + fixedSize - headersSize + zigzagSize(maxValueBytes)
    // Nothing is zeroed for the writer (it writes every byte), and one that throws leaves nothing the batch keeps:
    // end has not moved.
    const valueEnd = write(buf, this.view, reservedAt, arg)
    const valueLength = valueEnd - reservedAt
    const bodySize = fixedSize + zigzagSize(valueLength) + valueLength
    const shift = zigzagSize(maxBody) + zigzagSize(maxValueBytes) - zigzagSize(bodySize) - zigzagSize(valueLength)
    if (shift > 0) buf.copyWithin(reservedAt - shift, reservedAt, valueEnd)
    let at = writeZigzag(buf, this.end, bodySize)
    buf[at++] = 0 // record attributes: unused
    at = writeZigzag(buf, at, timestampDelta)
    at = writeZigzag(buf, at, this.count)
    buf[at++] = 1 // zigzag(-1): no key
    at = writeZigzag(buf, at, valueLength) + valueLength
    if (headers === undefined)
      buf[at++] = 0 // zigzag(0): no headers
    else at += headers.copy(buf, at)
    this.end = at
    this.count++
    if (timestamp > this.maxTimestamp || this.count === 1) this.maxTimestamp = timestamp
    return true
  }

  private grow(size: number): void {
    const bigger = this.allocate(size)
    this.buf.copy(bigger, 0, 0, this.end)
    this.buf = bigger
  }

  /** The records written so far (a view of the builder's buffer, which it hands over) and the header fields they need. */
  finish(): OpenBatch {
    return {
      records: this.buf.subarray(BATCH.HEADER_BYTES, this.end),
      count: this.count,
      firstTimestamp: this.firstTimestamp,
      maxTimestamp: this.maxTimestamp
    }
  }

  /**
   * Compresses the records section with `codec` and writes the batch header. Producer id, epoch, sequence and
   * CRC are left to `stampProducerState`, because sequences are assigned when the batch is first sent.
   */
  seal(codec: Codec): SealedBatch {
    if (codec.id === 0) {
      const out = this.buf.subarray(0, this.end)
      writeBatchHeader(out, {
        count: this.count,
        attributes: 0,
        firstTimestamp: this.firstTimestamp,
        maxTimestamp: this.maxTimestamp
      })
      return {
        bytes: out,
        recordCount: this.count,
        uncompressedBytes: this.end,
        compressCpuSeconds: 0,
        firstTimestamp: this.firstTimestamp
      }
    }
    return sealRecords(this.finish(), codec, Buffer.allocUnsafe)
  }
}

/** A finished batch's records section (uncompressed, no header) and the fields its header needs. */
export interface OpenBatch {
  readonly records: Uint8Array
  readonly count: number
  readonly firstTimestamp: number
  readonly maxTimestamp: number
}

/**
 * A clock for sealRecords that reads nothing, for a caller that measures the CPU of many batches itself: reading
 * the process's CPU (getrusage) twice per batch costs a projection thread a measurable share of its CPU.
 */
export const NO_CLOCK = (): number => 0

/**
 * Compresses `batch.records` and puts a batch header in front. `allocate` makes the output buffer: a worker
 * thread passes Buffer.allocUnsafeSlow so the result owns its memory and can be transferred back.
 * CPU is `cpuSeconds`' difference over the compress call; by default the process's, exact to the microsecond
 * when nothing else runs meanwhile (a caller beside busy compression threads passes its own thread's clock).
 */
export function sealRecords(
  batch: OpenBatch,
  codec: Codec,
  allocate: (size: number) => Buffer,
  cpuSeconds: () => number = processCpuSeconds
): SealedBatch {
  const before = codec.id === 0 ? 0 : cpuSeconds()
  // Copied into `out` at once, so the codec may compress into memory it reuses.
  const compressed =
    codec.id === 0 ? batch.records : (codec.compressTransient?.(batch.records) ?? codec.compress(batch.records))
  const compressCpuSeconds = codec.id === 0 ? 0 : Math.max(0, cpuSeconds() - before)
  const out = allocate(BATCH.HEADER_BYTES + compressed.length)
  out.set(compressed, BATCH.HEADER_BYTES)
  writeBatchHeader(out, {
    count: batch.count,
    attributes: codec.id,
    firstTimestamp: batch.firstTimestamp,
    maxTimestamp: batch.maxTimestamp
  })
  return {
    bytes: out,
    recordCount: batch.count,
    uncompressedBytes: BATCH.HEADER_BYTES + batch.records.length,
    compressCpuSeconds,
    firstTimestamp: batch.firstTimestamp
  }
}

export interface BatchHeaderFields {
  count: number
  attributes: number
  firstTimestamp: number
  maxTimestamp: number
}

/** Writes a magic-2 batch header (no producer fields, no CRC: `stampProducerState` writes those) into `out`. */
export function writeBatchHeader(out: Buffer, fields: BatchHeaderFields): void {
  out.writeBigInt64BE(0n, BATCH.BASE_OFFSET)
  out.writeInt32BE(out.length - BATCH.LOG_OVERHEAD, BATCH.LENGTH)
  out.writeInt32BE(-1, BATCH.PARTITION_LEADER_EPOCH)
  out.writeInt8(2, BATCH.MAGIC)
  out.writeInt16BE(fields.attributes, BATCH.ATTRIBUTES)
  out.writeInt32BE(fields.count - 1, BATCH.LAST_OFFSET_DELTA)
  out.writeBigInt64BE(BigInt(fields.firstTimestamp), BATCH.BASE_TIMESTAMP)
  out.writeBigInt64BE(BigInt(fields.maxTimestamp), BATCH.MAX_TIMESTAMP)
  out.writeInt32BE(fields.count, BATCH.RECORD_COUNT)
}

/** Writes the producer fields of a sealed batch and its CRC; called again if the producer epoch changes. */
export function stampProducerState(batch: Buffer, producer: BatchProducerState): void {
  batch.writeBigInt64BE(producer.producerId, BATCH.PRODUCER_ID)
  batch.writeInt16BE(producer.producerEpoch, BATCH.PRODUCER_EPOCH)
  batch.writeInt32BE(producer.baseSequence, BATCH.BASE_SEQUENCE)
  const attributes = batch.readInt16BE(BATCH.ATTRIBUTES)
  const transactional = producer.transactional ? ATTRIBUTE.TRANSACTIONAL : 0
  batch.writeInt16BE((attributes & ~ATTRIBUTE.TRANSACTIONAL) | transactional, BATCH.ATTRIBUTES)
  batch.writeUInt32BE(crc32c(batch, BATCH.ATTRIBUTES), BATCH.CRC)
}

/** Builds one complete batch from `records` (tests, benchmarks and tools; the producer streams instead). */
export function buildBatch(
  records: readonly OutgoingRecord[],
  codec: Codec,
  producer: BatchProducerState = NON_IDEMPOTENT,
  now: number = Date.now()
): SealedBatch {
  const builder = new RecordBatchBuilder(Number.POSITIVE_INFINITY, 64 * 1024)
  for (const record of records) {
    if (!builder.tryAppend(record, record.timestamp ?? now))
      throw new RangeError('unreachable: a builder that only grows always accepts')
  }
  const sealed = builder.seal(codec)
  stampProducerState(sealed.bytes, producer)
  return sealed
}
