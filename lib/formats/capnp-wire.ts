import { ErrorCodes, SqueezeError } from '../errors.js'

/**
 * The Cap'n Proto wire primitives the generated codecs (*.generated.ts, written by tools/capnp-gen.ts) call: a
 * struct view over one segment with bounds-checked field reads, and the text writers. Only what squeeze's writers
 * emit is read here (one segment, near pointers); a far pointer raises NeedsReferenceReader so that the caller
 * hands the message to capnp-ts.
 */

/** Thrown when a message uses what only capnp-ts reads (far pointers); never leaves the reader. */
export class NeedsReferenceReader extends Error {}

export function corrupt(reason: string, cause?: unknown): SqueezeError {
  return new SqueezeError(
    ErrorCodes.DECODE_RECORD,
    `corrupt HttpRequest message: ${reason}`,
    cause === undefined ? {} : { cause }
  )
}

export interface StructView {
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

/** The view of a struct with no data and no pointers: every field reads as its default. */
export const EMPTY_VIEW: StructView = {
  buf: Buffer.alloc(0),
  seg: 0,
  segLen: 0,
  data: 0,
  dataBytes: 0,
  ptrs: 0,
  ptrCount: 0
}

/** The buffer dataViewOf answered for last, and its view: a record's fields, and records one after another, come from one buffer. */
let viewedBuf: Buffer | null = null
let view: DataView = new DataView(new ArrayBuffer(0))

/**
 * A DataView over `b`, the one made for it last time when `b` is the same buffer: a word read through it is one
 * load, where four byte loads and their shifts cost the zero-copy check a large share of its time.
 */
export function dataViewOf(b: Buffer): DataView {
  if (b !== viewedBuf) {
    viewedBuf = b
    view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  }
  return view
}

/** Little-endian u32 from bytes already known to be in bounds (no Buffer argument checks). */
export function le32(b: Buffer, at: number): number {
  return dataViewOf(b).getUint32(at, true)
}

/** The root struct of the segment `buf[seg, seg + segLen)`, or null for a null root pointer. */
export function rootStruct(buf: Buffer, seg: number, segLen: number): StructView | null {
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
const latin1 =
  typeof proto.latin1Slice === 'function'
    ? (b: Buffer, s: number, e: number): string => (b as Buffer & Required<SliceFastPaths>).latin1Slice(s, e)
    : (b: Buffer, s: number, e: number): string => b.toString('latin1', s, e)
const utf8 =
  typeof proto.utf8Slice === 'function'
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
export function textLength(s: StructView, index: number): number {
  if (index >= s.ptrCount) return -1
  // In bounds: rootStruct checked that the pointer section lies inside the segment.
  return pointedTextLength(s.buf, dataViewOf(s.buf), s.seg, s.segLen, s.ptrs + index * 8, index)
}

/**
 * textLength of the pointer at `at` (text field `index`) in the segment `buf[seg, seg + segLen)`, with `view` over
 * `buf`: for a reader that walks the pointers itself rather than through a StructView.
 */
export function pointedTextLength(
  buf: Buffer,
  view: DataView,
  seg: number,
  segLen: number,
  at: number,
  index: number
): number {
  const lo = view.getUint32(at, true)
  const hi = view.getUint32(at + 4, true)
  if (lo === 0 && hi === 0) return -1
  const kind = lo & 3
  if (kind === 2) throw new NeedsReferenceReader()
  if (kind !== 1) throw corrupt(`pointer ${index} is not a list pointer (kind ${kind})`)
  if ((hi & 7) !== 2) throw corrupt(`pointer ${index} is not a byte list (element size ${hi & 7})`)
  const count = hi >>> 3
  if (count === 0) return -1
  const start = at + 8 + (lo >> 2) * 8
  if (start < seg || start + count > seg + segLen) throw corrupt(`text ${index} lies outside the segment`)
  if (buf[start + count - 1] !== 0) throw corrupt(`text ${index} is not NUL-terminated`)
  return count - 1
}

/** The offset of text field `index`'s first byte; meaningful once textLength has checked the pointer. */
function textStart(s: StructView, index: number): number {
  const at = s.ptrs + index * 8
  return at + 8 + (le32(s.buf, at) >> 2) * 8
}

/** Text field `index` as a string; '' when unset. */
export function text(s: StructView, index: number): string {
  const length = textLength(s, index)
  if (length === -1) return ''
  const start = textStart(s, index)
  const end = start + length
  // Log fields are almost always ASCII; latin1 is a straight byte copy, far cheaper than UTF-8.
  return isAscii(s.buf, start, end) ? latin1(s.buf, start, end) : utf8(s.buf, start, end)
}

// Fields past the struct's data section read as their default, which is how Cap'n Proto lets an
// older writer (smaller struct) talk to a newer reader.
export function u8(s: StructView, off: number): number {
  return off + 1 <= s.dataBytes ? s.buf.readUInt8(s.data + off) : 0
}
export function u16(s: StructView, off: number): number {
  return off + 2 <= s.dataBytes ? s.buf.readUInt16LE(s.data + off) : 0
}
export function u32(s: StructView, off: number): number {
  return off + 4 <= s.dataBytes ? s.buf.readUInt32LE(s.data + off) : 0
}
export function u64(s: StructView, off: number): bigint {
  return off + 8 <= s.dataBytes ? s.buf.readBigUInt64LE(s.data + off) : 0n
}
export function f32(s: StructView, off: number): number {
  return off + 4 <= s.dataBytes ? s.buf.readFloatLE(s.data + off) : 0
}
export function f64(s: StructView, off: number): number {
  return off + 8 <= s.dataBytes ? s.buf.readDoubleLE(s.data + off) : 0
}

/** Enum lookup that maps unknown future ordinals to the zero enumerant instead of undefined. */
export function enumName<T extends string>(names: readonly T[], wire: number): T {
  return names[wire] ?? (names[0] as T)
}

/** A map from enumerant name to its wire ordinal, for the writers. */
export function enumOrdinals(names: readonly string[]): ReadonlyMap<string, number> {
  return new Map(names.map((name, i) => [name, i]))
}

/** A UTF-8 byte per UTF-16 unit, at most 3; a text's NUL and padding take at most TEXT_OVERHEAD bytes more. */
export const MAX_UTF8_PER_UNIT = 3
export const TEXT_OVERHEAD = 8
/** Strings this short are copied by a JS loop when ASCII: cheaper than a call into the runtime's UTF-8 encoder. */
const SHORT_TEXT = 48

interface Utf8Write {
  utf8Write?(text: string, offset: number): number
}
const utf8Write =
  typeof (Buffer.prototype as Buffer & Utf8Write).utf8Write === 'function'
    ? (buf: Buffer, text: string, at: number): number => (buf as Buffer & Required<Utf8Write>).utf8Write(text, at)
    : (buf: Buffer, text: string, at: number): number => buf.write(text, at, 'utf8')

/** Writes `text` (non-empty) at `at` as UTF-8 and returns its byte length; the slab has room for the worst case. */
function encodeText(buf: Buffer, text: string, at: number): number {
  const n = text.length
  if (n < SHORT_TEXT) {
    let i = 0
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c > 0x7f) break
      buf[at + i] = c
    }
    if (i === n) return n
  }
  return utf8Write(buf, text, at)
}

/**
 * Finishes a text of `bytes` bytes written at `end`: its NUL and padding to a word, and pointer `ptrAt` at it.
 * Returns the word after it. The writers write every byte of a record, so they need no zeroed room.
 */
function finishText(buf: Buffer, view: DataView, ptrAt: number, end: number, bytes: number): number {
  const next = end + ((bytes + 1 + 7) & ~7)
  for (let i = end + bytes; i < next; i++) buf[i] = 0
  view.setUint32(ptrAt, (((end - ptrAt - 8) >> 3) << 2) | 1, true) // list pointer: offset in words from the next word
  view.setUint32(ptrAt + 4, ((bytes + 1) << 3) | 2, true) // element size 2 (byte), count with the NUL
  return next
}

/** An empty text: a null pointer, as the reference writer leaves it. */
function nullPointer(view: DataView, ptrAt: number): void {
  view.setUint32(ptrAt, 0, true)
  view.setUint32(ptrAt + 4, 0, true)
}

/** Appends a text field at `end` and points pointer `ptrAt` at it (a null pointer if empty); returns the new end. */
export function putText(buf: Buffer, view: DataView, ptrAt: number, end: number, text: string): number {
  if (text.length === 0) {
    nullPointer(view, ptrAt)
    return end
  }
  return finishText(buf, view, ptrAt, end, encodeText(buf, text, end))
}

/** Appends `src[from, to)` (ASCII) as a text field at `end`, as putText does for its string; returns the new end. */
export function putSpan(
  buf: Buffer,
  view: DataView,
  ptrAt: number,
  end: number,
  src: Buffer,
  from: number,
  to: number
): number {
  const bytes = to - from
  if (bytes === 0) {
    nullPointer(view, ptrAt)
    return end
  }
  if (bytes < SHORT_TEXT) {
    for (let i = 0; i < bytes; i++) buf[end + i] = src[from + i] as number
  } else {
    src.copy(buf, end, from, to)
  }
  return finishText(buf, view, ptrAt, end, bytes)
}

/**
 * One record read in place from a line's bytes: each text field a byte range of `src`, each u64 two 32-bit halves,
 * every other field a number (an enum its ordinal). A parser that reads the line's bytes fills one of these, reused
 * line after line, and a generated spans writer copies the ranges: no string per field, and no UTF-8 encoding,
 * because the parser hands over only ranges whose text is ASCII (its UTF-8 is the bytes themselves). No bigint
 * either: one per line was most of what such a run left for the garbage collector.
 */
export interface StructSpans<Numbers> {
  src: Buffer
  /** `[text[2i], text[2i + 1])` of `src` holds the text field at pointer index i; an equal pair is an empty text. */
  readonly text: Int32Array
  /** The u64 field at data offset `at` as its low half at `[at / 4]` and its high half at `[at / 4 + 1]`. */
  readonly u64: Uint32Array
  readonly values: Numbers
}
