import type { ValueWriter } from '../protocol/record-batch-builder.js'
import type { ValueTable } from '../protocol/record-batch-reader.js'

/** Where a binary format's writeLine puts its record: a batch, through Producer.sendWritten bound to a topic. */
export interface WrittenValueSink {
  put<T>(maxValueBytes: number, write: ValueWriter<T>, arg: T): Promise<void> | undefined
}

/**
 * A format's reader of many lines at once (LogFormat.linePass), the caller's own until release(). read() takes the
 * lines of `bytes[start, end)` (split at each newline; the last ends at `end`) from the first, as many as one pass
 * takes: line `i` of `count` is `bytes[start(i), end(i))` (no newline, no CR); where taken(i), the pass parsed it and
 * put(i, sink) writes its record, as writeLine would; elsewhere the line is the format's writeLineBytes's to read.
 * The next read starts at `next`, which is past `end` once the last line is read. A read's lines are valid until
 * the next read.
 */
export interface LinePass {
  readonly count: number
  readonly next: number
  read(bytes: Buffer, start: number, end: number): void
  start(i: number): number
  end(i: number): number
  taken(i: number): boolean
  put(i: number, sink: WrittenValueSink): Promise<void> | undefined
  release(): void
}

/** The six log kinds squeeze knows how to turn into Kafka records and read back. */
export type LogKind = 'http' | 'journald' | 'nginx-error' | 'dns-dnsmasq' | 'dns-zeek' | 'syslog'

export interface LogFormat {
  readonly kind: LogKind
  /** Turns one text line into a record value. Throws SqueezeError(PARSE_LINE) with a short reason when the line does not parse. */
  encodeLine(line: string): Buffer
  /**
   * For a format whose record value is the line's own UTF-8 text: throws as encodeLine does on a line that does not
   * parse, so a caller holding the line's bytes sends them instead of encoding the text again.
   */
  checkLine?(line: string): void
  /**
   * Parses or checks the line (throwing as encodeLine does) and has `sink` write its record straight into a batch,
   * the bytes encodeLine returns, without a Buffer of its own. Returns what `sink.put` does.
   */
  writeLine(line: string, sink: WrittenValueSink): Promise<void> | undefined
  /**
   * writeLine for a line given as its bytes, `bytes[start, end)` (no newline, no CR), which the format reads in place
   * where it can and decodes to text where it cannot: the same record, or the same error, as writeLine of the
   * line's text. The bytes are not kept after it returns.
   */
  writeLineBytes(bytes: Buffer, start: number, end: number, sink: WrittenValueSink): Promise<void> | undefined
  /** A reader of many lines at once, for the caller alone until its release() (see LinePass); null where the format reads them one by one. */
  linePass?(): LinePass | null
  /**
   * Decodes a record value reading EVERY field (so decode CPU is honest); returns the number of fields read.
   * Binary formats read zero-copy, as their own readers do (a text field is located and checked, not copied into
   * a JS string); text formats parse the line. Throws SqueezeError(DECODE_RECORD) on corrupt input; must never
   * crash the process or hang on arbitrary bytes.
   */
  decode(value: Uint8Array): number
  /** decode() of `bytes[start, end)`, where a format can read in place without a view per record. */
  decodeAt?(bytes: Buffer, start: number, end: number): number
  /**
   * decodeAt of every value of a batch in one call, where the format can: a flag per row, 1 for a value read and well
   * formed, 0 for one to read with decodeAt (for its error, or a form this pass leaves). Null where the format reads
   * each value with decodeAt after all. The flags are the format's, valid until its next call.
   */
  decodeValues?(values: ValueTable): Uint8Array | null
}

/** `format`'s decode of a value given as `bytes[start, end)`: decodeAt where it reads in place, else decode of a view. */
export function rangeDecoder(format: LogFormat): (bytes: Buffer, start: number, end: number) => number {
  return format.decodeAt?.bind(format) ?? ((bytes, start, end) => format.decode(bytes.subarray(start, end)))
}

/** UTF-8 of a JS string's text takes at most 3 bytes per UTF-16 code unit (a surrogate pair: 4 bytes for 2 units). */
const MAX_UTF8_BYTES_PER_UNIT = 3

/** Writes the line's UTF-8 text into a batch (a ValueWriter): the bytes Buffer.from(line) would hold, without that Buffer. */
function writeLineText(buf: Buffer, _view: DataView, at: number, line: string): number {
  return at + buf.write(line, at)
}

/** A line's bytes, held for the one synchronous sink.put that copies them (see lineAsValue's writeLineBytes). */
interface HeldLine {
  bytes: Buffer
  start: number
  end: number
}

/** Copies the held line's bytes into a batch (a ValueWriter). */
function copyHeldLine(buf: Buffer, _view: DataView, at: number, line: HeldLine): number {
  return at + line.bytes.copy(buf, at, line.start, line.end)
}

const NO_BYTES = Buffer.alloc(0)

/**
 * The record half of a format whose value is the line's own UTF-8 text: the line checked, then sent as it is.
 * `accepts`, where a format has one, reads a line's bytes in place and returns true only for a line `check` takes;
 * false means "ask check", which then reads the line's text, for its error or for a form the bytes pass leaves to it.
 */
export function lineAsValue(
  check: (line: string) => void,
  accepts?: (bytes: Buffer, start: number, end: number) => boolean
): Pick<LogFormat, 'checkLine' | 'encodeLine' | 'writeLine' | 'writeLineBytes'> {
  // sink.put writes before it returns (into a batch, or a Buffer of the record's own), so one holder serves every line.
  const held: HeldLine = { bytes: NO_BYTES, start: 0, end: 0 }
  return {
    checkLine: check,
    encodeLine(line: string): Buffer {
      check(line)
      return Buffer.from(line, 'utf8')
    },
    // The text goes straight into the batch: no Buffer, no view of the read chunk, no record object per line.
    writeLine(line: string, sink: WrittenValueSink): Promise<void> | undefined {
      check(line)
      return sink.put(line.length * MAX_UTF8_BYTES_PER_UNIT, writeLineText, line)
    },
    // The line's text is checked and its bytes copied: encoding the text again into the batch cost more than the
    // check. Bytes that are not valid UTF-8 go as they are, as a line that comes with its bytes does (writeItems).
    writeLineBytes(bytes: Buffer, start: number, end: number, sink: WrittenValueSink): Promise<void> | undefined {
      if (accepts?.(bytes, start, end) !== true) check(bytes.toString('utf8', start, end))
      held.bytes = bytes
      held.start = start
      held.end = end
      try {
        return sink.put(end - start, copyHeldLine, held)
      } finally {
        held.bytes = NO_BYTES
      }
    }
  }
}
