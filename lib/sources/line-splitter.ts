import { isUtf8 } from 'node:buffer'
import type { SourceItem } from './source.js'

/** The longest line a source holds by default before it splits it: Filebeat's max_bytes default, 10 MiB, is more. */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024

const NEWLINE = 0x0a
const CR = 0x0d

/**
 * Cuts bytes as they arrive into lines, holding at most `maxLineBytes` of a line not finished yet: a longer line is
 * split into pieces of at most that many bytes (cut before a UTF-8 sequence, never inside one), each its own line,
 * and `onSplit` is called once per line split. Nothing is dropped, so a read position after any piece is exact.
 */
export class LineSplitter {
  private pending: Buffer = Buffer.alloc(0)
  /** Whether the line being read was already cut: counted once. */
  private splitting = false
  /** Per line the last push returned: the bytes of input it took up, its newline (and CR) included. */
  consumed: number[] = []

  constructor(
    private readonly maxLineBytes: number,
    private readonly onSplit?: () => void
  ) {
    if (!Number.isInteger(maxLineBytes) || maxLineBytes < 4) {
      throw new RangeError('maxLineBytes must be an integer of at least 4')
    }
  }

  /** Bytes held: the start of a line not finished yet, never more than maxLineBytes. */
  get pendingBytes(): number {
    return this.pending.length
  }

  /** The lines `bytes` completes, without their newline or a CR before it; each a copy the caller may keep. */
  push(bytes: Buffer): Buffer[] {
    const lines: Buffer[] = []
    this.consumed = []
    let start = 0
    for (;;) {
      const newline = bytes.indexOf(NEWLINE, start)
      const stop = newline < 0 ? bytes.length : newline
      // The piece of the current line in `bytes`, cut while the line would exceed the bound.
      while (this.pending.length + (stop - start) > this.maxLineBytes) {
        const room = this.maxLineBytes - this.pending.length
        const joined = Buffer.concat([this.pending, bytes.subarray(start, start + room)])
        const cut = utf8Boundary(joined)
        lines.push(joined.subarray(0, cut))
        this.consumed.push(cut)
        this.pending = Buffer.from(joined.subarray(cut))
        start += room
        if (!this.splitting) this.onSplit?.()
        this.splitting = true
      }
      if (newline < 0) {
        this.pending = Buffer.concat([this.pending, bytes.subarray(start)])
        return lines
      }
      const rest = bytes.subarray(start, stop)
      const line = this.pending.length === 0 ? Buffer.from(rest) : Buffer.concat([this.pending, rest])
      lines.push(line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, -1) : line)
      this.consumed.push(line.length + 1)
      this.pending = Buffer.alloc(0)
      this.splitting = false
      start = newline + 1
    }
  }

  /** The last line, when the input did not end with a newline; null when it did. */
  end(): Buffer | null {
    const rest = this.pending
    this.pending = Buffer.alloc(0)
    this.splitting = false
    if (rest.length === 0) return null
    return rest[rest.length - 1] === CR ? rest.subarray(0, -1) : rest
  }
}

/**
 * Where to cut `bytes` so no UTF-8 sequence is split: before the lead byte of a sequence that the end cuts off.
 * Bytes that are not UTF-8 are cut at the end.
 */
export function utf8Boundary(bytes: Buffer): number {
  const end = bytes.length
  for (let back = 1; back <= 4 && back <= end; back++) {
    const b = bytes[end - back] as number
    if ((b & 0xc0) === 0x80) continue // a continuation byte: look further back for its lead byte
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1
    return length > back && back < end ? end - back : end
  }
  return end
}

/** A line's item: its text, and its bytes where the text would not encode back to them (not valid UTF-8). */
export function lineItem(bytes: Buffer): SourceItem {
  const line = bytes.toString('utf8')
  return isUtf8(bytes) ? { kind: 'line', line } : { kind: 'line', line, bytes }
}
