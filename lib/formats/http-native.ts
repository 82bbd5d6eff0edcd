import { createRequire } from 'node:module'
import { TEXT_OVERHEAD } from './capnp-wire.js'
import type { ValueTable } from '../protocol/record-batch-reader.js'
import {
  HTTP_REQUEST_DATA_BYTES,
  HTTP_REQUEST_POINTERS,
  HTTP_REQUEST_SCALARS_END,
  HTTP_REQUEST_TEXT_POINTERS
} from './http-request.generated.js'
import type { LinePass, WrittenValueSink } from './log-format.js'

/**
 * The native fast path for access-log lines (encodeHttpLines in native/squeeze-lz4, src/binding.c): the lines of a
 * chunk parsed and their HttpRequest messages written in C, one call a chunk, for the lines the TypeScript reads in
 * place (scanCombinedLine, CombinedTimeOfBytes, writeHttpRequestSpansAt), to the same bytes. It takes only plain
 * ASCII lines with the canonical timestamp; any other it leaves to the TypeScript, which stays the definition of the
 * format and the reference the tests hold the C to.
 *
 * The messages land in a scratch buffer with their sizes, so a line that is not the C's is known before room is
 * reserved in a batch; sink.put then copies each message in.
 */
type EncodeHttpLines = (src: Uint8Array, start: number, end: number, out: Uint8Array, table: Int32Array) => number

/**
 * checkHttpValues in src/binding.c: checkHttpRequestAt's zero-copy check of every row of a value table in one call;
 * `done[i]` becomes 1 for a message it read, 0 for one left to the TypeScript (a corrupt one, several segments, a
 * far pointer, a null value). Returns how many non-null values it left.
 */
export type CheckHttpValues = (
  bytes: Uint8Array,
  table: Int32Array,
  count: number,
  stride: number,
  startColumn: number,
  textMask: number,
  scalarBytes: number,
  done: Uint8Array
) => number

interface HttpLinesBinding {
  encodeHttpLines?: EncodeHttpLines
  checkHttpValues?: CheckHttpValues
}

/** Segment header and root pointer (two words), the data section and the pointer section. */
const FIXED_BYTES = 16 + HTTP_REQUEST_DATA_BYTES + 8 * HTTP_REQUEST_POINTERS
/** The most a line's message can take beyond the line's length: texts are parts of the line, each with its NUL and padding. */
const LINE_OVERHEAD_BYTES = FIXED_BYTES + HTTP_REQUEST_POINTERS * TEXT_OVERHEAD
/** int32s a line takes in the table: its start, its text's end, its message's offset in the scratch, its size. */
const ROW = 4
/** Lines one call takes at most: a 96 KiB read of typical access-log lines is a few hundred. */
const LINES_PER_CALL = 1024

const require = createRequire(import.meta.url)

/** The native functions, or none where SQUEEZE_HTTP_NATIVE=js switches the C off (the TypeScript path alone). */
function binding(): HttpLinesBinding {
  if (process.env['SQUEEZE_HTTP_NATIVE'] === 'js') return {}
  // The functions live in squeeze's one native binding; a build from before them has none.
  return require('squeeze-lz4') as HttpLinesBinding
}

/** The lines of a chunk as one native call reads them; its table and scratch are reused from call to call. */
class NativeLinePass implements LinePass {
  count = 0
  next = 0
  private readonly table = new Int32Array(ROW * LINES_PER_CALL + 1)
  /** The messages of the lines read last, until they are copied into their batches; grown for a longer chunk. */
  private scratch = Buffer.alloc(0)
  /** sink.put's writer: row `i`'s message copied in at `at`. Bound once, as put passes it for every line. */
  private readonly copyRow = (buf: Buffer, _view: DataView, at: number, i: number): number => {
    const from = this.table[ROW * i + 2] as number
    return at + this.scratch.copy(buf, at, from, from + (this.table[ROW * i + 3] as number))
  }

  constructor(
    private readonly encode: EncodeHttpLines,
    private readonly free: NativeLinePass[]
  ) {}

  read(src: Buffer, start: number, end: number): void {
    // Room for the first line whatever its length, and for about all the chunk's messages (a message is about 1.6
    // times its line), so one call usually takes a whole chunk.
    const room = 2 * (end - start) + LINE_OVERHEAD_BYTES
    if (this.scratch.length < room) this.scratch = Buffer.allocUnsafe(room)
    this.count = this.encode(src, start, end, this.scratch, this.table)
    this.next = this.table[ROW * this.count] as number
  }

  start(i: number): number {
    return this.table[ROW * i] as number
  }

  end(i: number): number {
    return this.table[ROW * i + 1] as number
  }

  taken(i: number): boolean {
    return (this.table[ROW * i + 3] as number) >= 0
  }

  put(i: number, sink: WrittenValueSink): Promise<void> | undefined {
    return sink.put(this.table[ROW * i + 3] as number, this.copyRow, i)
  }

  release(): void {
    this.free.push(this)
  }
}

/** The native function, null for the TypeScript only; undefined until asked for. */
let encode: EncodeHttpLines | null | undefined
/** Passes released, for the next caller: one per caller reading at the same time, each with its own scratch. */
const free: NativeLinePass[] = []

function encoder(): EncodeHttpLines | null {
  // Not ??=: null (no native path) is a choice made, not one to make again for every chunk.
  if (encode === undefined) encode = binding().encodeHttpLines ?? null
  return encode
}

/**
 * A pass that reads the lines of a chunk in C, the caller's own until its release() (see LinePass); null where the
 * TypeScript reads every line (the native function is missing, or switched off with SQUEEZE_HTTP_NATIVE=js).
 */
export function httpLinePass(): LinePass | null {
  const native = encoder()
  if (native === null) return null
  return free.pop() ?? new NativeLinePass(native, free)
}

/** Which way httpFormat reads the lines of a chunk: in C, or in TypeScript. */
export function httpLinesImplementation(): 'native' | 'js' {
  return encoder() === null ? 'js' : 'native'
}

/** The text pointers of HttpRequest as a bit mask: the C checks these, as checkFast does. */
const TEXT_MASK = HTTP_REQUEST_TEXT_POINTERS.reduce((mask, index) => (mask | (1 << index)) >>> 0, 0)
/** Reading every pointer as text takes a mask of all of them: a schema past 32 pointers is read in TypeScript. */
const MASK_FITS = HTTP_REQUEST_POINTERS <= 32

/** The native check, null for the TypeScript only; undefined until asked for. */
let check: CheckHttpValues | null | undefined
/** The flags of the last call, reused: the caller reads them before the next one. */
let done = new Uint8Array(0)

/**
 * LogFormat.decodeValues for HttpRequest records: every value of the table checked in C as checkHttpRequestAt
 * checks it, the flags of the rows read (1) and left to checkHttpRequestAt (0); null where the TypeScript reads every
 * value (no native function, or SQUEEZE_HTTP_NATIVE=js). The flags are valid until the next call.
 */
export function checkHttpValues(values: ValueTable): Uint8Array | null {
  if (check === undefined) check = MASK_FITS ? (binding().checkHttpValues ?? null) : null
  if (check === null) return null
  if (done.length < values.count) done = new Uint8Array(Math.max(values.count, 2 * done.length))
  const { bytes, table, count, stride, startColumn } = values
  check(bytes, table, count, stride, startColumn, TEXT_MASK, HTTP_REQUEST_SCALARS_END, done)
  return done
}
