import { isUtf8 } from 'node:buffer'
import type { LineChunk, SourceItem } from './source.js'

// How a chunk of whole lines read from a file becomes lines: shared by the single-file reader and the file set.

/**
 * Bytes per read of a file read once: several hundred lines per batch. Below V8's large-object size (128 KiB), so a
 * read's text is an ordinary young string and the read buffer, its text and its lines stay in the CPU's cache (larger
 * reads were slower on the end-to-end bench: `npm run bench -- e2e`).
 */
export const READ_ONCE_BYTES = 96 * 1024
export const NEWLINE = 0x0a
const CR = 0x0d

/**
 * The lines of a chunk (see LineChunk), each with its text, and its bytes where its text would not encode back to
 * them (bytes that are not valid UTF-8) and `wantBytes`; those are a copy, since the chunk's buffer is read into again.
 */
export function chunkLines(chunk: LineChunk, wantBytes: boolean): SourceItem[] {
  const { bytes, end } = chunk
  if (!wantBytes || !needsBytes(bytes, end)) return linesOf(bytes, end, false)
  return linesOf(Buffer.from(bytes.subarray(0, end)), end, true)
}

/**
 * Whether the lines of `chunk[0, end)` need their bytes beside their text: only where the text would not encode back
 * to them, i.e. bytes that are not valid UTF-8 (a cut at a newline never splits a valid sequence).
 */
function needsBytes(chunk: Buffer, end: number): boolean {
  return !isUtf8(chunk.subarray(0, end))
}

/**
 * The lines of `chunk[0, end)` (`end` at a newline or the end of the file), each with its text, and its bytes if
 * `withBytes`. One toString for them all: a newline byte is never part of a UTF-8 sequence, valid or not, so the
 * text's lines and the bytes' lines pair up one to one.
 */
function linesOf(chunk: Buffer, end: number, withBytes: boolean): SourceItem[] {
  const texts = chunk.toString('utf8', 0, end).split('\n')
  const items: SourceItem[] = new Array(texts.length)
  if (!withBytes) {
    for (let i = 0; i < texts.length; i++) items[i] = { kind: 'line', line: stripCr(texts[i] as string) }
    return items
  }
  let start = 0
  for (let i = 0; i < texts.length; i++) {
    const stop = lineEnd(chunk, start, end)
    const textStop = textEnd(chunk, start, stop)
    const text = texts[i] as string
    // A CR byte always decodes to '\r', so the text loses one exactly when the bytes do.
    items[i] = {
      kind: 'line',
      line: textStop < stop ? text.slice(0, -1) : text,
      bytes: chunk.subarray(start, textStop)
    }
    start = stop + 1
  }
  return items
}

/** The end of the line that starts at `start` in a LineChunk's `bytes[0, end)`: its '\n', or `end` for the last. */
export function lineEnd(bytes: Buffer, start: number, end: number): number {
  const newline = bytes.indexOf(NEWLINE, start)
  // Bytes past `end` are the next line's start, or stale.
  return newline < 0 || newline > end ? end : newline
}

/** Where the text of the line `bytes[start, stop)` ends: before a CR that ends it (CRLF line endings). */
export function textEnd(bytes: Buffer, start: number, stop: number): number {
  return stop > start && bytes[stop - 1] === CR ? stop - 1 : stop
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}
