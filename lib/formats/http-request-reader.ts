import { SqueezeError } from '../errors.js'
import { corrupt, dataViewOf, NeedsReferenceReader, pointedTextLength, rootStruct } from './capnp-wire.js'
import {
  HTTP_REQUEST_SCALARS_END,
  HTTP_REQUEST_TEXT_POINTERS,
  readHttpRequestSegment,
  type HttpRequestFields
} from './http-request.generated.js'
import { readHttpRequestViaCapnpTs } from './http-request.js'

/**
 * Zero-copy reader for HttpRequest messages. capnp-ts allocates a Message, arena, segment copies
 * and a pointer object per field, which caps it near 20k records/s; measuring decode cost with it
 * would measure capnp-ts, not the format. This reader walks the wire format directly (the field reads are
 * generated from the schema) and only supports what our writer emits (one segment, near pointers); anything
 * else goes through capnp-ts.
 */

// A 1 MB record is already far beyond any log line; refusing bigger segments up front keeps a
// corrupt header from turning into a huge slice or a long walk.
const MAX_SEGMENTS = 64

function asBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
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
  const view = dataViewOf(buf)
  let seen = 0
  // The scalars tile the data section (SCALARS_END bytes): read it a word at a time, up to what the writer sent.
  const scalarBytes = Math.min(s.dataBytes, HTTP_REQUEST_SCALARS_END)
  for (let at = 0; at + 4 <= scalarBytes; at += 4) seen += view.getUint32(s.data + at, true)
  for (let i = 0; i < HTTP_REQUEST_TEXT_POINTERS.length; i++) {
    const index = HTTP_REQUEST_TEXT_POINTERS[i] as number
    if (index >= s.ptrCount) continue
    const length = pointedTextLength(buf, view, seg, segLen, s.ptrs + index * 8, index)
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
  return withFastPath(buf, 0, buf.length, readHttpRequestSegment, () => readViaReference(value))
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
function withFastPath<T>(
  buf: Buffer,
  start: number,
  end: number,
  fast: (buf: Buffer, seg: number, segLen: number) => T,
  reference: () => T
): T {
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

function runFast<T>(
  buf: Buffer,
  seg: number,
  segLen: number,
  fast: (buf: Buffer, seg: number, segLen: number) => T,
  reference: () => T
): T {
  try {
    return fast(buf, seg, segLen)
  } catch (err) {
    if (err instanceof NeedsReferenceReader) return reference()
    if (err instanceof SqueezeError) throw err
    // Buffer reads throw RangeError on any bounds slip the checks above missed; still a corrupt record.
    throw corrupt(err instanceof Error ? err.message : String(err), err)
  }
}
