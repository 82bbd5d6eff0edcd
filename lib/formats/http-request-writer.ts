import {
  HTTP_REQUEST_TEXT_SLOTS,
  HTTP_REQUEST_U64_SLOTS,
  maxHttpRequestBytes,
  writeHttpRequestAt,
  type HttpRequestFields
} from './http-request.generated.js'

/**
 * HttpRequest messages written without capnp-ts, byte for byte as capnp-ts lays them out (writeHttpRequestViaCapnpTs
 * stays the reference the tests compare against): stream header (one segment), root struct pointer, the struct's
 * data and pointer sections, then each non-empty text field in schema order, NUL-terminated and padded to a word.
 * capnp-ts builds a Message, an arena, a pointer object per field and a TextEncoder array per string, then copies
 * the segment out; that was most of the producer's CPU. Here a record is a few typed stores into a slab, in code
 * generated from the schema (http-request.generated.ts).
 */
export {
  emptyHttpRequestSpans,
  maxHttpRequestBytes,
  maxHttpRequestSpansBytes,
  writeHttpRequestAt,
  writeHttpRequestSpansAt,
  type HttpRequestNumbers,
  type HttpRequestSpans
} from './http-request.generated.js'

/**
 * Writes one record at `s` of `buf` (`v` a view of the same memory), every byte of it (the room need not be zeroed),
 * within `s + maxHttpRequestBytes(f)`, and returns where it ends.
 */
export type HttpRequestWrite = (buf: Buffer, v: DataView, s: number, f: HttpRequestFields) => number

/** Where text field `name`'s range starts in HttpRequestSpans.text. */
export function textSlot(name: keyof typeof HTTP_REQUEST_TEXT_SLOTS): number {
  return HTTP_REQUEST_TEXT_SLOTS[name]
}

/** Where u64 field `name`'s low half is in HttpRequestSpans.u64. */
export function u64Slot(name: keyof typeof HTTP_REQUEST_U64_SLOTS): number {
  return HTTP_REQUEST_U64_SLOTS[name]
}

const TWO_32 = 0x1_0000_0000

/** Sets the u64 at `slot` of `u64` to `value`, an integer from 0 to 2^53. */
export function setU64(u64: Uint32Array, slot: number, value: number): void {
  const low = value % TWO_32
  u64[slot] = low
  u64[slot + 1] = (value - low) / TWO_32
}

/** Sets the u64 at `slot` to `value` modulo 2^64, as DataView.setBigUint64 would store it. */
export function setU64FromBigInt(u64: Uint32Array, slot: number, value: bigint): void {
  const wrapped = BigInt.asUintN(64, value)
  u64[slot] = Number(wrapped & 0xffff_ffffn)
  u64[slot + 1] = Number(wrapped >> 32n)
}

/** Memory handed out front to back; a record is a view of it, so nothing is copied and nothing reused. */
class Slab {
  buf: Buffer = Buffer.alloc(0)
  view: DataView = new DataView(this.buf.buffer, this.buf.byteOffset, 0)
  private at = 0

  constructor(private readonly slabBytes: number) {}

  /** The offset a record of at most `bytes` starts at, opening a new slab when this one lacks the room. */
  reserve(bytes: number): number {
    if (this.at + bytes > this.buf.length) {
      // Not zeroed: the writer writes every byte of a record.
      this.buf = Buffer.allocUnsafe(Math.max(this.slabBytes, bytes))
      this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length)
      this.at = 0
    }
    return this.at
  }

  take(end: number): Buffer {
    const record = this.buf.subarray(this.at, end)
    this.at = end
    return record
  }
}

/** Default slab: a few hundred typical records, so a slab costs one allocation per few hundred lines. */
const SLAB_BYTES = 256 * 1024

/**
 * Writes HttpRequest records into slabs it allocates and never writes twice: each returned Buffer stays valid
 * and unchanged for as long as it is referenced (a producer may hold it until its batch is built).
 */
export class HttpRequestWriter {
  private readonly slab: Slab

  constructor(slabBytes = SLAB_BYTES) {
    this.slab = new Slab(slabBytes)
  }

  /** Serialises one record as a standard framed, unpacked, single-segment Cap'n Proto message. */
  write(fields: HttpRequestFields): Buffer {
    const slab = this.slab
    const start = slab.reserve(maxHttpRequestBytes(fields))
    return slab.take(writeHttpRequestAt(slab.buf, slab.view, start, fields))
  }
}

const shared = new HttpRequestWriter()

/** Serialises one record as a standard framed, unpacked, single-segment Cap'n Proto message. */
export function writeHttpRequest(fields: HttpRequestFields): Buffer {
  return shared.write(fields)
}
