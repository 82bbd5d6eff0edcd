import { HTTP_REQUEST_DATA_BYTES, HTTP_REQUEST_POINTERS, HTTP_REQUEST_SCHEMA, type HttpRequestField, type HttpRequestFields } from './http-request.js'

/**
 * HttpRequest messages written without capnp-ts, byte for byte as capnp-ts lays them out (writeHttpRequestViaCapnpTs
 * stays the reference the tests compare against): stream header (one segment), root struct pointer, the struct's
 * data and pointer sections, then each non-empty text field in schema order, NUL-terminated and padded to a word.
 * capnp-ts builds a Message, an arena, a pointer object per field and a TextEncoder array per string, then copies
 * the segment out; that was most of the producer's CPU. Here a record is a few typed stores into a slab.
 */

const HEADER_BYTES = 8
const ROOT_POINTER_BYTES = 8
const STRUCT_BYTES = HTTP_REQUEST_DATA_BYTES + HTTP_REQUEST_POINTERS * 8
/** Where the first text lands: everything before it has a fixed size. */
const FIXED_BYTES = HEADER_BYTES + ROOT_POINTER_BYTES + STRUCT_BYTES
const DATA_AT = HEADER_BYTES + ROOT_POINTER_BYTES
const POINTERS_AT = DATA_AT + HTTP_REQUEST_DATA_BYTES
/** The root struct pointer's upper word: data words, then pointer count (its offset word is 0: the struct follows). */
const ROOT_POINTER_HI = HTTP_REQUEST_DATA_BYTES / 8 | (HTTP_REQUEST_POINTERS << 16)
const TEXT_FIELDS = HTTP_REQUEST_SCHEMA.filter((field) => field.kind === 'text')
/** A UTF-8 byte per UTF-16 unit, at most 3; plus the NUL and up to 7 bytes of padding. */
const MAX_UTF8_PER_UNIT = 3
const TEXT_OVERHEAD = 8
/** Strings this short are copied by a JS loop when ASCII: cheaper than a call into the runtime's UTF-8 encoder. */
const SHORT_TEXT = 48

interface Utf8Write {
  utf8Write?(text: string, offset: number): number
}
const utf8Write = typeof (Buffer.prototype as Buffer & Utf8Write).utf8Write === 'function'
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
function putText(buf: Buffer, view: DataView, ptrAt: number, end: number, text: string): number {
  if (text.length === 0) {
    nullPointer(view, ptrAt)
    return end
  }
  return finishText(buf, view, ptrAt, end, encodeText(buf, text, end))
}

/**
 * The statements that zero what no field writes in record `s`: the stream header's segment count, the root pointer's
 * offset word, and any byte of the data section no field covers (none in today's schema). Every other byte is a
 * field's, a pointer's or a text's.
 */
function unwrittenBytesStatements(): string {
  const covered = new Uint8Array(HTTP_REQUEST_DATA_BYTES)
  const widths: Record<Exclude<HttpRequestField['kind'], 'text'>, number> = { u16: 2, enum: 2, u32: 4, f32: 4, u64: 8 }
  for (const field of HTTP_REQUEST_SCHEMA) if (field.kind !== 'text') covered.fill(1, field.at, field.at + widths[field.kind])
  const gaps = [...covered.keys()].filter((i) => covered[i] === 0).map((i) => `  buf[s + ${DATA_AT + i}] = 0`)
  return [`  v.setUint32(s, 0, true)`, `  v.setUint32(s + ${HEADER_BYTES}, 0, true)`, ...gaps].join('\n')
}

/**
 * The source of a compiled writer's body, the same frame for both writers: the data section at `d`, the header and
 * root pointer words, the fields' `statements` in schema order (each moving `end` past its text), then the
 * segment's size in words. `locals` are the writer's own declarations, before the frame's.
 */
function recordWriterBody(locals: string, statements: string): string {
  return `${locals}
  const d = s + ${DATA_AT}
  let end = s + ${FIXED_BYTES}
${unwrittenBytesStatements()}
  v.setUint32(s + ${HEADER_BYTES + 4}, ${ROOT_POINTER_HI}, true)
${statements}
  v.setUint32(s + 4, (end - s - ${HEADER_BYTES}) / 8, true)
  return end`
}

function enumOrdinals(names: readonly string[]): ReadonlyMap<string, number> {
  return new Map(names.map((name, i) => [name, i]))
}

/**
 * Writes one record at `s` of `buf` (`v` a view of the same memory), every byte of it (the room need not be zeroed),
 * within `s + maxHttpRequestBytes(f)`, and returns where it ends.
 */
export type HttpRequestWrite = (buf: Buffer, v: DataView, s: number, f: HttpRequestFields) => number

/** The statement that writes one field into record `s` (view `v`, data section at `d`), as source for compileWriter. */
function writeStatement(field: HttpRequestField, index: number): string {
  const value = `f.${field.name}`
  switch (field.kind) {
    case 'text': return `end = putText(buf, v, s + ${POINTERS_AT + field.at * 8}, end, ${value})`
    case 'u16': return `v.setUint16(d + ${field.at}, ${value}, true)`
    case 'u32': return `v.setUint32(d + ${field.at}, ${value}, true)`
    case 'u64': return `v.setBigUint64(d + ${field.at}, ${value}, true)`
    case 'f32': return `v.setFloat32(d + ${field.at}, ${value}, true)`
    case 'enum': return `v.setUint16(d + ${field.at}, ordinals[${index}].get(${value}) ?? 0, true)`
  }
}

/**
 * The writer, compiled from HTTP_REQUEST_SCHEMA into straight-line code, as the fast reader is: no per-field
 * dispatch per record. Text goes in schema order, which is capnp-ts's allocation order and what the golden bytes
 * pin. The source is built from the schema constants only, never from input.
 */
function compileWriter(): { write: HttpRequestWrite; maxBytes: (f: HttpRequestFields) => number } {
  const bound = TEXT_FIELDS.map((field) => `f.${field.name}.length`).join(' + ')
  const statements = HTTP_REQUEST_SCHEMA.map((field, index) => `  ${writeStatement(field, index)}`).join('\n')
  const source = `return [function writeHttpRequestAt(buf, v, s, f) {
${recordWriterBody('', statements)}
}, function maxHttpRequestBytes(f) {
  return ${FIXED_BYTES + TEXT_FIELDS.length * TEXT_OVERHEAD} + (${bound}) * ${MAX_UTF8_PER_UNIT}
}]`
  const ordinals = HTTP_REQUEST_SCHEMA.map((field) => (field.kind === 'enum' ? enumOrdinals(field.names) : undefined))
  const build = new Function('putText', 'ordinals', source) as (...deps: unknown[]) => [HttpRequestWrite, (f: HttpRequestFields) => number]
  const [write, maxBytes] = build(putText, ordinals)
  return { write, maxBytes }
}

/**
 * One record read in place from a line's bytes: each text field a byte range of `src`, each u64 two 32-bit halves,
 * every other field a number (an enum its ordinal). A parser that reads the line's bytes fills one of these, reused
 * line after line, and writeHttpRequestSpansAt copies the ranges: no string per field, and no UTF-8 encoding,
 * because the parser hands over only ranges whose text is ASCII (its UTF-8 is the bytes themselves). No bigint
 * either: one per line was most of what such a run left for the garbage collector.
 */
export interface HttpRequestSpans {
  src: Buffer
  /** `[text[2i], text[2i + 1])` of `src` holds the text field at pointer index i; an equal pair is an empty text. */
  readonly text: Int32Array
  /** The u64 field at data offset `at` as its low half at `[at / 4]` and its high half at `[at / 4 + 1]`. */
  readonly u64: Uint32Array
  readonly values: HttpRequestNumbers
}

/** The fields that are neither text nor u64, as numbers. */
export type HttpRequestNumbers = { -readonly [F in HttpRequestField as F['kind'] extends 'text' | 'u64' ? never : F['name']]: number }

/** Spans for a record with every field at its default (all zero, every text empty). */
export function emptyHttpRequestSpans(): HttpRequestSpans {
  const values = Object.fromEntries(HTTP_REQUEST_SCHEMA.filter((field) => field.kind !== 'text' && field.kind !== 'u64').map((field) => [field.name, 0])) as HttpRequestNumbers
  return { src: Buffer.alloc(0), text: new Int32Array(HTTP_REQUEST_POINTERS * 2), u64: new Uint32Array(HTTP_REQUEST_DATA_BYTES / 4), values }
}

function schemaField(name: string, kind: 'text' | 'u64'): HttpRequestField {
  const field = HTTP_REQUEST_SCHEMA.find((f) => f.name === name && f.kind === kind)
  if (field === undefined) throw new Error(`no ${kind} field ${name} in the HttpRequest schema`)
  return field
}

/** Where text field `name`'s range starts in HttpRequestSpans.text. */
export function textSlot(name: string): number {
  return schemaField(name, 'text').at * 2
}

/** Where u64 field `name`'s low half is in HttpRequestSpans.u64. */
export function u64Slot(name: string): number {
  return schemaField(name, 'u64').at / 4
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

/** Appends `src[from, to)` (ASCII) as a text field at `end`, as putText does for its string; returns the new end. */
function putSpan(buf: Buffer, view: DataView, ptrAt: number, end: number, src: Buffer, from: number, to: number): number {
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

/** The statement that writes one field of spans `p` (numbers `n`, ranges `t` of `src`, u64 halves `w`), as source for compileSpansWriter. */
function spanStatement(field: HttpRequestField): string {
  switch (field.kind) {
    case 'text': return `end = putSpan(buf, v, s + ${POINTERS_AT + field.at * 8}, end, src, t[${field.at * 2}], t[${field.at * 2 + 1}])`
    case 'u16': case 'enum': return `v.setUint16(d + ${field.at}, n.${field.name}, true)`
    case 'u32': return `v.setUint32(d + ${field.at}, n.${field.name}, true)`
    case 'u64': return `v.setUint32(d + ${field.at}, w[${field.at / 4}], true); v.setUint32(d + ${field.at + 4}, w[${field.at / 4 + 1}], true)`
    case 'f32': return `v.setFloat32(d + ${field.at}, n.${field.name}, true)`
  }
}

/** writeHttpRequestAt's twin for spans, compiled from the same schema in the same order: the same bytes for the same record. */
function compileSpansWriter(): (buf: Buffer, v: DataView, s: number, p: HttpRequestSpans) => number {
  const statements = HTTP_REQUEST_SCHEMA.map((field) => `  ${spanStatement(field)}`).join('\n')
  const locals = '  const src = p.src\n  const t = p.text\n  const n = p.values\n  const w = p.u64'
  const source = `return function writeHttpRequestSpansAt(buf, v, s, p) {
${recordWriterBody(locals, statements)}
}`
  return (new Function('putSpan', source) as (...deps: unknown[]) => (buf: Buffer, v: DataView, s: number, p: HttpRequestSpans) => number)(putSpan)
}

/** Writes the record `spans` describe, as writeHttpRequestAt writes the same record from its fields. */
export const writeHttpRequestSpansAt: (buf: Buffer, v: DataView, s: number, spans: HttpRequestSpans) => number = compileSpansWriter()

/** The most bytes writeHttpRequestSpansAt writes for `spans`: the fixed part, each text's bytes, NUL and padding. */
export function maxHttpRequestSpansBytes(spans: HttpRequestSpans): number {
  const text = spans.text
  let bytes = FIXED_BYTES + TEXT_FIELDS.length * TEXT_OVERHEAD
  for (let i = 0; i < text.length; i += 2) bytes += (text[i + 1] as number) - (text[i] as number)
  return bytes
}

const compiled = compileWriter()
/** Writes one record (see HttpRequestWrite): into a batch builder's buffer, or a slab. */
export const writeHttpRequestAt: HttpRequestWrite = compiled.write
/** The most bytes writeHttpRequestAt writes for `fields`: every UTF-16 unit as 3 UTF-8 bytes, each text's NUL and padding. */
export const maxHttpRequestBytes: (fields: HttpRequestFields) => number = compiled.maxBytes

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
