import { ErrorCodes, SqueezeError } from '../errors.js'
import { HTTP_REQUEST_SCHEMA, enumName, readHttpRequestViaCapnpTs, type HttpRequestField, type HttpRequestFields } from './http-request.js'

/**
 * Zero-copy reader for HttpRequest messages. capnp-ts allocates a Message, arena, segment copies
 * and a pointer object per field, which caps it near 20k records/s; measuring decode cost with it
 * would measure capnp-ts, not the format. This reader walks the wire format directly and only
 * supports what our writer emits (one segment, near pointers); anything else goes through capnp-ts.
 */

// A 1 MB record is already far beyond any log line; refusing bigger segments up front keeps a
// corrupt header from turning into a huge slice or a long walk.
const MAX_SEGMENTS = 64

class NeedsReferenceReader extends Error {}

function corrupt(reason: string, cause?: unknown): SqueezeError {
  return new SqueezeError(ErrorCodes.DECODE_RECORD, `corrupt HttpRequest message: ${reason}`, cause === undefined ? {} : { cause })
}

function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
}

interface StructView {
  buf: Buffer
  /** Absolute byte offset of the segment start in buf. */
  seg: number
  /** Segment length in bytes. */
  segLen: number
  /** Absolute byte offset of the data section. */
  data: number
  dataBytes: number
  /** Absolute byte offset of the pointer section. */
  ptrs: number
  ptrCount: number
}

/** Validates the stream framing and returns the absolute offset and length of every segment. */
function readFraming(buf: Buffer): Array<{ start: number; length: number }> {
  if (buf.length < 8) throw corrupt(`message is ${buf.length} bytes, shorter than the smallest frame (8)`)
  const count = buf.readUInt32LE(0) + 1
  if (count > MAX_SEGMENTS) throw corrupt(`segment table claims ${count} segments`)
  // Header: 4 bytes count + 4 per segment, padded to a word.
  const headerBytes = (4 + 4 * count + 7) & ~7
  if (headerBytes > buf.length) throw corrupt('segment table truncated')
  const segments: Array<{ start: number; length: number }> = []
  let at = headerBytes
  for (let i = 0; i < count; i++) {
    const length = buf.readUInt32LE(4 + 4 * i) * 8
    if (length > buf.length - at) throw corrupt(`segment ${i} (${length} bytes) runs past the end of the message`)
    segments.push({ start: at, length })
    at += length
  }
  return segments
}

/** Little-endian u32 from bytes already known to be in bounds (no Buffer argument checks). */
function le32(b: Buffer, at: number): number {
  return ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 24)) >>> 0
}

function rootStruct(buf: Buffer, seg: number, segLen: number): StructView | null {
  if (segLen < 8) throw corrupt('segment too small for a root pointer')
  // In bounds: the framing put the segment inside buf, and it holds at least this word.
  const lo = le32(buf, seg)
  const hi = le32(buf, seg + 4)
  if (lo === 0 && hi === 0) return null
  const kind = lo & 3
  if (kind === 2) throw new NeedsReferenceReader()
  if (kind !== 0) throw corrupt(`root pointer is not a struct pointer (kind ${kind})`)
  const offsetWords = lo >> 2 // arithmetic shift keeps the sign
  const dataWords = hi & 0xffff
  const ptrCount = hi >>> 16
  const startWord = 1 + offsetWords
  const endWord = startWord + dataWords + ptrCount
  if (startWord < 0 || endWord * 8 > segLen) throw corrupt('root struct lies outside the segment')
  const data = seg + startWord * 8
  return { buf, seg, segLen, data, dataBytes: dataWords * 8, ptrs: data + dataWords * 8, ptrCount }
}

// Buffer#latin1Slice/utf8Slice skip toString()'s encoding lookup and argument checks, which
// dominate for the short strings log fields are; fall back if a runtime ever drops them.
interface SliceFastPaths {
  latin1Slice?(start: number, end: number): string
  utf8Slice?(start: number, end: number): string
}
const proto = Buffer.prototype as Buffer & SliceFastPaths
const latin1 = typeof proto.latin1Slice === 'function'
  ? (b: Buffer, s: number, e: number): string => (b as Buffer & Required<SliceFastPaths>).latin1Slice(s, e)
  : (b: Buffer, s: number, e: number): string => b.toString('latin1', s, e)
const utf8 = typeof proto.utf8Slice === 'function'
  ? (b: Buffer, s: number, e: number): string => (b as Buffer & Required<SliceFastPaths>).utf8Slice(s, e)
  : (b: Buffer, s: number, e: number): string => b.toString('utf8', s, e)

function isAscii(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if ((buf[i] as number) > 0x7f) return false
  return true
}

/**
 * Checks text field `index` (the pointer's kind, the bounds and the NUL terminator Text must end with) and
 * returns its length, NUL excluded, or -1 for an unset field. The zero-copy check needs only this.
 */
function textLength(s: StructView, index: number): number {
  if (index >= s.ptrCount) return -1
  const at = s.ptrs + index * 8
  // In bounds: rootStruct checked that the pointer section lies inside the segment.
  const lo = le32(s.buf, at)
  const hi = le32(s.buf, at + 4)
  if (lo === 0 && hi === 0) return -1
  const kind = lo & 3
  if (kind === 2) throw new NeedsReferenceReader()
  if (kind !== 1) throw corrupt(`pointer ${index} is not a list pointer (kind ${kind})`)
  if ((hi & 7) !== 2) throw corrupt(`pointer ${index} is not a byte list (element size ${hi & 7})`)
  const count = hi >>> 3
  if (count === 0) return -1
  const start = textStart(s, index)
  if (start < s.seg || start + count > s.seg + s.segLen) throw corrupt(`text ${index} lies outside the segment`)
  if (s.buf[start + count - 1] !== 0) throw corrupt(`text ${index} is not NUL-terminated`)
  return count - 1
}

/** The offset of text field `index`'s first byte; meaningful once textLength has checked the pointer. */
function textStart(s: StructView, index: number): number {
  const at = s.ptrs + index * 8
  return at + 8 + (le32(s.buf, at) >> 2) * 8
}

function text(s: StructView, index: number): string {
  const length = textLength(s, index)
  if (length === -1) return ''
  const start = textStart(s, index)
  const end = start + length
  // Log fields are almost always ASCII; latin1 is a straight byte copy, far cheaper than UTF-8.
  return isAscii(s.buf, start, end) ? latin1(s.buf, start, end) : utf8(s.buf, start, end)
}

// Fields past the struct's data section read as their default, which is how Cap'n Proto lets an
// older writer (smaller struct) talk to a newer reader.
function u16(s: StructView, off: number): number {
  return off + 2 <= s.dataBytes ? s.buf.readUInt16LE(s.data + off) : 0
}
function u32(s: StructView, off: number): number {
  return off + 4 <= s.dataBytes ? s.buf.readUInt32LE(s.data + off) : 0
}
function u64(s: StructView, off: number): bigint {
  return off + 8 <= s.dataBytes ? s.buf.readBigUInt64LE(s.data + off) : 0n
}
function f32(s: StructView, off: number): number {
  return off + 4 <= s.dataBytes ? s.buf.readFloatLE(s.data + off) : 0
}

const EMPTY_VIEW: StructView = { buf: Buffer.alloc(0), seg: 0, segLen: 0, data: 0, dataBytes: 0, ptrs: 0, ptrCount: 0 }

type FastReader = (buf: Buffer, seg: number, segLen: number) => HttpRequestFields

/** The read expression of one field, as source for compileFastReader. */
function readExpression(field: HttpRequestField, index: number): string {
  switch (field.kind) {
    case 'text': return `text(s, ${field.at})`
    case 'enum': return `enumName(schema[${index}].names, u16(s, ${field.at}))`
    default: return `${field.kind}(s, ${field.at})`
  }
}

/**
 * readFast, compiled from HTTP_REQUEST_SCHEMA into one object literal, so it stays what the hand-written
 * reader was: one allocation of one hidden class per record, no per-field dispatch on the decode path.
 * The source is built from the schema constants only, never from input.
 */
function compileFastReader(): FastReader {
  const properties = HTTP_REQUEST_SCHEMA.map((field, index) => `${field.name}: ${readExpression(field, index)}`).join(',\n')
  const source = `return function readFast(buf, seg, segLen) {\n  const s = rootStruct(buf, seg, segLen) ?? EMPTY_VIEW\n  return {\n${properties}\n  }\n}`
  const build = new Function('rootStruct', 'EMPTY_VIEW', 'text', 'u16', 'u32', 'u64', 'f32', 'enumName', 'schema', source) as (...deps: unknown[]) => FastReader
  return build(rootStruct, EMPTY_VIEW, text, u16, u32, u64, f32, enumName, HTTP_REQUEST_SCHEMA)
}

const readFast = compileFastReader()

const TEXT_POINTERS: readonly number[] = HTTP_REQUEST_SCHEMA.filter((field) => field.kind === 'text').map((field) => field.at)
const SCALAR_BYTES = { u16: 2, enum: 2, u32: 4, f32: 4, u64: 8 } as const
/** Where the last scalar field ends: the scalars cover the data section up to here. */
const SCALARS_END = Math.max(...HTTP_REQUEST_SCHEMA.map((field) => (field.kind === 'text' ? 0 : field.at + SCALAR_BYTES[field.kind])))

/**
 * Reads every field of a single-segment message without building JS values: the scalars' bytes are read
 * (enums map to a name or the default, as in readHttpRequest, so they cannot fail), each text field is located
 * and checked (pointer kind, bounds, NUL terminator) and its length counted. This is how a Cap'n Proto consumer
 * reads (zero copy; a string is made only when a field is used), and it rejects exactly what readHttpRequest
 * rejects. Returns a sum over the bytes read, so the work is observable.
 */
function checkFast(buf: Buffer, seg: number, segLen: number): number {
  const s = rootStruct(buf, seg, segLen)
  if (s === null) return 0
  let seen = 0
  // The scalars tile the data section (SCALARS_END bytes): read it a word at a time, up to what the writer sent.
  const scalarBytes = Math.min(s.dataBytes, SCALARS_END)
  for (let at = 0; at + 4 <= scalarBytes; at += 4) seen += le32(buf, s.data + at)
  for (const index of TEXT_POINTERS) {
    const length = textLength(s, index)
    if (length !== -1) seen += length
  }
  return seen
}

function readViaReference(value: Uint8Array): HttpRequestFields {
  try {
    return readHttpRequestViaCapnpTs(value)
  } catch (err) {
    throw corrupt(err instanceof Error ? err.message : String(err), err)
  }
}

/**
 * Decodes one HttpRequest record value. Throws SqueezeError(DECODE_RECORD) for anything that is
 * not a well-formed message; never returns partially read garbage from out-of-bounds pointers.
 */
export function readHttpRequest(value: Uint8Array): HttpRequestFields {
  const buf = asBuffer(value)
  return withFastPath(buf, 0, buf.length, readFast, () => readViaReference(value))
}

/**
 * Reads every field of one HttpRequest record value the zero-copy way (see checkFast) and returns the
 * number of text bytes it holds. Throws SqueezeError(DECODE_RECORD) exactly where readHttpRequest would.
 */
export function checkHttpRequest(value: Uint8Array): number {
  const buf = asBuffer(value)
  return checkHttpRequestAt(buf, 0, buf.length)
}

/** checkHttpRequest of `buf[start, end)`, reading in place: no view is made unless capnp-ts must step in. */
export function checkHttpRequestAt(buf: Buffer, start: number, end: number): number {
  return withFastPath(buf, start, end, checkFast, () => Object.keys(readViaReference(buf.subarray(start, end))).length)
}

/** The message in `buf[start, end)` through `fast` when it is one segment of near pointers, else through `reference`. */
function withFastPath<T>(buf: Buffer, start: number, end: number, fast: (buf: Buffer, seg: number, segLen: number) => T, reference: () => T): T {
  // One segment is what squeeze writes: read its size straight from the header, no segment table objects.
  if (end - start >= 8 && buf.readUInt32LE(start) === 0) {
    const length = buf.readUInt32LE(start + 4) * 8
    if (length > end - start - 8) throw corrupt(`segment 0 (${length} bytes) runs past the end of the message`)
    return runFast(buf, start + 8, length, fast, reference)
  }
  const view = buf.subarray(start, end)
  const segments = readFraming(view)
  const first = segments[0]
  if (first === undefined) throw corrupt('no segments')
  if (segments.length > 1) return reference()
  return runFast(view, first.start, first.length, fast, reference)
}

function runFast<T>(buf: Buffer, seg: number, segLen: number, fast: (buf: Buffer, seg: number, segLen: number) => T, reference: () => T): T {
  try {
    return fast(buf, seg, segLen)
  } catch (err) {
    if (err instanceof NeedsReferenceReader) return reference()
    if (err instanceof SqueezeError) throw err
    // Buffer reads throw RangeError on any bounds slip the checks above missed; still a corrupt record.
    throw corrupt(err instanceof Error ? err.message : String(err), err)
  }
}
