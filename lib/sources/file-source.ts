import { open, stat } from 'node:fs/promises'
import { unreadableFile } from '../errors.js'
import { compressedFileError, compressedFileFormatAt, compressedFormat } from '../formats/compressed-file.js'
import { createLogger } from '../log/logger.js'
import { FileSet } from './file-set.js'
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, lineItem, utf8Boundary } from './line-splitter.js'
import { chunkLines, NEWLINE, READ_ONCE_BYTES } from './line-chunks.js'
import type { LineChunk, SourceBatch, SourceItem } from './source.js'

export interface FileSourceOptions {
  /** Keep reading as the file grows, and reopen it when it is rotated or truncated (tail -F). */
  readonly follow: boolean
  readonly pollMs?: number
  /**
   * How long a file rotated away (renamed, then replaced) is still read after the new one appears: the writer
   * keeps appending to it until it reopens its log (logrotate's postrotate signal). Default 5 s, like
   * fluent-bit's rotate_wait.
   */
  readonly rotateWaitMs?: number
  /** Bytes per read (default 256 KiB while following, 96 KiB for a file read once). */
  readonly readSizeBytes?: number
  /**
   * Whether the lines of a file read once come with their bytes where their text would not re-encode to them: a
   * read that is not valid UTF-8 (default true). Everywhere else, and always without this, a line is its text
   * alone: no view and no newline search per line.
   */
  readonly lineBytes?: boolean
  /** The longest line held; a longer one is split into pieces this long (see LineSplitter). Default 1 MiB. */
  readonly maxLineBytes?: number
  /** Called once for each line split. */
  readonly onLineSplit?: () => void
  readonly signal?: AbortSignal
}

/** Lines of a file, read once or followed. */
export async function* readFileLines(path: string, options: FileSourceOptions): AsyncGenerator<SourceItem> {
  for await (const batch of readFileBatches(path, options)) yield* batch
}

/**
 * Lines of a file, read once or followed, a batch per read: the lines a read completed. A file read once is
 * read in 96 KiB chunks (readline's promise and event per line were a sixth of the producer's CPU; see
 * readFileChunks), each decoded in one toString: a newline byte never sits inside a UTF-8 sequence, so no
 * character is split. That is a tenth of the CPU of a StringDecoder plus joining the carried-over text to the
 * next chunk's, which was half of `produce --source file`'s main thread before parsing.
 */
export async function* readFileBatches(path: string, options: FileSourceOptions): AsyncGenerator<SourceBatch> {
  if (options.follow) {
    await requireFile(path)
    yield* followFile(path, options)
    return
  }
  const wantBytes = options.lineBytes ?? true
  for await (const chunk of readFileChunks(path, options)) yield chunkLines(chunk, wantBytes)
}

/** Fails now, in one line, for a path that is not a file squeeze can read lines of: missing, refused, a directory, or compressed. */
export async function requireFile(path: string): Promise<void> {
  const s = await stat(path).catch((err: unknown) => {
    throw unreadableFile(path, err)
  })
  // open() takes a directory; its first read would fail, mid-run.
  if (s.isDirectory()) throw unreadableFile(path, { code: 'EISDIR' })
  const format = await compressedFileFormatAt(path)
  if (format !== null) throw compressedFileError(path, format)
}

/**
 * A file read once, as the whole lines each read completed, undecoded: a format that reads a line's bytes in place
 * (LogFormat.writeLineBytes) needs no text of it. Each chunk is cut after its last newline, and the bytes after it
 * move to the front for the next read. The chunk's buffer is read into again once the next chunk is asked for.
 */
export async function* readFileChunks(
  path: string,
  options: Pick<FileSourceOptions, 'readSizeBytes' | 'maxLineBytes' | 'onLineSplit' | 'signal'>
): AsyncGenerator<LineChunk> {
  await requireFile(path)
  const handle = await open(path, 'r').catch((err: unknown) => {
    throw unreadableFile(path, err)
  })
  const maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
  // A chunk never holds more than maxLine bytes, so no line in it is longer.
  let chunk: Buffer = Buffer.allocUnsafe(Math.min(options.readSizeBytes ?? READ_ONCE_BYTES, maxLine))
  /** Whether the line at the front of `chunk` was already cut: counted once. */
  let splitting = false
  /** Bytes at the front of `chunk` after the last newline read so far: the start of a line. */
  let carried = 0
  /**
   * The read in flight, into `chunk` after the carried bytes. The next read starts before a chunk's lines are
   * handed on, so the file is read while they are parsed: a read waited for in turn cost a thread-pool round
   * trip per chunk, a sixth of the access-log run's main thread idle.
   */
  let reading: Promise<{ bytesRead: number }> = handle.read(chunk, 0, chunk.length, null)
  /** The buffer of the chunk handed on before, free again once the next one is asked for. */
  let spare: Buffer | null = null
  try {
    for (;;) {
      const { bytesRead } = await reading.catch((err: unknown) => {
        throw unreadableFile(path, err)
      })
      if (options.signal?.aborted === true) return
      const end = carried + bytesRead
      if (bytesRead === 0) {
        if (end > 0) yield { bytes: chunk, end }
        return
      }
      // The carried bytes hold no newline, so one found is in what this read added.
      const last = chunk.lastIndexOf(NEWLINE, end - 1)
      if (last < 0 && (end < chunk.length || chunk.length < maxLine)) {
        carried = end
        // A line longer than the chunk: room for more of it, up to maxLine.
        if (carried === chunk.length) chunk = Buffer.concat([chunk], Math.min(chunk.length * 2, maxLine))
        reading = handle.read(chunk, carried, chunk.length - carried, null)
        continue
      }
      // A full chunk with no newline is a line longer than maxLine: its first piece is handed on as a line.
      const cut = last < 0 ? utf8Boundary(chunk.subarray(0, end)) : last
      if (last < 0 && !splitting) options.onLineSplit?.()
      splitting = last < 0
      const next = spare !== null && spare.length === chunk.length ? spare : Buffer.allocUnsafe(chunk.length)
      carried = chunk.copy(next, 0, last < 0 ? cut : last + 1, end)
      reading = handle.read(next, carried, next.length - carried, null)
      const lines: LineChunk = { bytes: chunk, end: cut }
      spare = chunk
      chunk = next
      yield lines
    }
  } finally {
    // A read may still be in flight when the consumer stops early: the handle is closed after it.
    await reading.catch(() => undefined)
    await handle.close()
  }
}

/**
 * tail -F without its losses, as a file set of one file without positions (see FileSet): a rotated-away file is
 * read to its end (and for rotateWaitMs longer) before it is closed, and after a copytruncate the lines appended
 * since the last read are taken from the copy, so nothing is skipped and nothing is read twice.
 */
async function* followFile(path: string, options: FileSourceOptions): AsyncGenerator<SourceBatch> {
  const files = new FileSet({
    patterns: [{ glob: escapeGlob(path), kind: '' }],
    follow: true,
    log: createLogger({ level: 'silent' }),
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.rotateWaitMs === undefined ? {} : { rotateWaitMs: options.rotateWaitMs }),
    ...(options.readSizeBytes === undefined ? {} : { readSizeBytes: options.readSizeBytes }),
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    ...(options.onLineSplit === undefined ? {} : { onLineSplit: options.onLineSplit }),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
  for await (const batch of files.batches()) yield batch.items
}

/** `path` as a glob that matches only itself. */
function escapeGlob(path: string): string {
  return path.replace(/[*?[\]{}()!]/g, '[$&]')
}

type LineOptions = Pick<FileSourceOptions, 'maxLineBytes' | 'onLineSplit'>

/** Lines from standard input until it closes, a batch per read; a line longer than maxLineBytes is split. */
export async function* readStdinBatches(
  options: LineOptions & Pick<FileSourceOptions, 'signal'> = {}
): AsyncGenerator<SourceBatch> {
  const splitter = new LineSplitter(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, options.onLineSplit)
  let first = true
  for await (const bytes of process.stdin as AsyncIterable<Buffer>) {
    if (options.signal?.aborted === true) return
    // `cat app.log.2.gz |` instead of `zcat`: compressed bytes are no lines, whatever --kind says.
    if (first) {
      const format = compressedFormat(bytes)
      if (format !== null) throw compressedFileError('stdin', format)
      first = false
    }
    const lines = splitter.push(bytes)
    if (lines.length > 0) yield lines.map(lineItem)
  }
  const rest = splitter.end()
  if (rest !== null) yield [lineItem(rest)]
}
