import { createRequire } from 'node:module'
import { TEXT_OVERHEAD } from './capnp-wire.js'
import { HTTP_REQUEST_DATA_BYTES, HTTP_REQUEST_POINTERS } from './http-request.generated.js'

/**
 * The native fast path for access-log lines (encodeHttpLine in native/squeeze-lz4, src/binding.c): a combined-log
 * line's bytes parsed and its HttpRequest message written in C, for the lines the TypeScript reads in place
 * (scanCombinedLine, CombinedTimeOfBytes, writeHttpRequestSpansAt), to the same bytes. It takes only plain ASCII
 * lines with the canonical timestamp; for any other it answers "not mine" and the TypeScript parses the line, so
 * the TypeScript stays the definition of the format and the reference the tests hold the C to.
 *
 * One call a line writes the message into a scratch buffer and says its size, so a line that is not the C's is
 * known before room is reserved in a batch; sink.put then copies the message in. Writing straight into the batch
 * would take two calls a line (parse and size, then write, with the parsed fields kept in C between them), and a
 * call into the binding costs more than the copy.
 */
interface HttpLineBinding {
  encodeHttpLine?: (src: Uint8Array, start: number, end: number, out: Uint8Array) => number
}

type EncodeHttpLine = (src: Uint8Array, start: number, end: number, out: Uint8Array) => number

/** Segment header and root pointer (two words), the data section and the pointer section. */
const FIXED_BYTES = 16 + HTTP_REQUEST_DATA_BYTES + 8 * HTTP_REQUEST_POINTERS
/** The most a line's message can take beyond the line's length: texts are parts of the line, each with its NUL and padding. */
const OVERHEAD_BYTES = FIXED_BYTES + HTTP_REQUEST_POINTERS * TEXT_OVERHEAD

const require = createRequire(import.meta.url)

function load(): EncodeHttpLine | null {
  // The function lives in squeeze's one native binding; a build from before it has none.
  const encode = (require('squeeze-lz4') as HttpLineBinding).encodeHttpLine
  return encode ?? null
}

/** The native function, null for the TypeScript only; undefined until the first line. */
let encode: EncodeHttpLine | null | undefined
/** Where the message of the line encoded last is, until it is copied into its batch; grown for a longer line. */
let scratch = Buffer.alloc(0)
/** The scratch buffer's first size: a few lines of any common length. */
const FIRST_SCRATCH_BYTES = 64 * 1024

function encoder(): EncodeHttpLine | null {
  // Not ??=: null (no native path) is a choice made, not one to make again on every line.
  if (encode === undefined) encode = process.env['SQUEEZE_HTTP_NATIVE'] === 'js' ? null : load()
  return encode
}

/**
 * Parses `src[start, end)` and writes its HttpRequest message in C; returns the message's size, or -1 where the
 * TypeScript is to read the line (it is not the C's, or the native function is missing or switched off with
 * SQUEEZE_HTTP_NATIVE=js). The message stays in a scratch buffer until copyEncodedLine, the next call's to make.
 */
export function encodeHttpLineNative(src: Buffer, start: number, end: number): number {
  const native = encoder()
  if (native === null) return -1
  const room = end - start + OVERHEAD_BYTES
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, scratch.length * 2, FIRST_SCRATCH_BYTES))
  return native(src, start, end, scratch)
}

/** A ValueWriter for sink.put: the message encodeHttpLineNative wrote last, of `bytes` bytes, copied in at `at`. */
export function copyEncodedLine(buf: Buffer, _view: DataView, at: number, bytes: number): number {
  return at + scratch.copy(buf, at, 0, bytes)
}

/** Which way httpFormat.writeLineBytes reads a line it can take in place: in C, or in TypeScript. */
export function httpLinesImplementation(): 'native' | 'js' {
  return encoder() === null ? 'js' : 'native'
}
