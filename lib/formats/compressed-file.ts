import { ErrorCodes, SqueezeError } from '../errors.js'
import { open, type FileHandle } from 'node:fs/promises'

/**
 * The first bytes of the compressed-file formats logrotate and shippers leave beside a log (access.log.2.gz,
 * .zst, .bz2, .xz, .lz4): a glob such as access.log* matches them too, and their bytes are no text lines.
 */
const MAGIC: ReadonlyArray<{ readonly format: string; readonly bytes: ReadonlyArray<number | readonly number[]> }> = [
  // ID1, ID2, and deflate, the only method gzip defines.
  { format: 'gzip', bytes: [0x1f, 0x8b, 0x08] },
  { format: 'zstd', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  // "BZh", the block size 1-9, and the first block's magic (pi's digits): "BZh" alone can start a text line.
  { format: 'bzip2', bytes: [0x42, 0x5a, 0x68, [0x31, 0x39], 0x31, 0x41, 0x59, 0x26, 0x53, 0x59] },
  { format: 'xz', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { format: 'lz4', bytes: [0x04, 0x22, 0x4d, 0x18] }
]
const MAGIC_BYTES = Math.max(...MAGIC.map((m) => m.bytes.length))

function matches(head: Buffer, bytes: ReadonlyArray<number | readonly number[]>): boolean {
  return (
    bytes.length <= head.length &&
    bytes.every((b, i) => {
      const at = head[i] ?? -1
      return typeof b === 'number' ? at === b : at >= (b[0] ?? 0) && at <= (b[1] ?? 0)
    })
  )
}

/** The compressed-file format `head` (a file's first bytes) starts with, or null for anything else. */
export function compressedFormat(head: Buffer): string | null {
  return MAGIC.find((m) => matches(head, m.bytes))?.format ?? null
}

/** The compressed-file format of the file open as `handle` (read at offset 0), or null; null too when unreadable. */
export async function compressedFileFormat(handle: FileHandle): Promise<string | null> {
  const head = Buffer.alloc(MAGIC_BYTES)
  const read = await handle.read(head, 0, MAGIC_BYTES, 0).catch(() => undefined)
  return read === undefined ? null : compressedFormat(head.subarray(0, read.bytesRead))
}

/** compressedFileFormat of the file at `path`; null when it cannot be opened (the reader then says why). */
export async function compressedFileFormatAt(path: string): Promise<string | null> {
  const handle = await open(path, 'r').catch(() => undefined)
  if (handle === undefined) return null
  try {
    return await compressedFileFormat(handle)
  } finally {
    await handle.close()
  }
}

const CAT: Readonly<Record<string, string>> = {
  gzip: 'zcat',
  zstd: 'zstdcat',
  bzip2: 'bzcat',
  xz: 'xzcat',
  lz4: 'lz4cat'
}

/** A compressed file a glob matched, left unread: what the warning says. */
export function compressedSkipMessage(path: string, format: string): string {
  return `skipping ${path}: ${format}-compressed, not text lines (a rotated log?); leave it out with --exclude`
}

/** A compressed file named alone, or compressed bytes on stdin (`path` 'stdin'): one error saying how to read its lines. */
export function compressedFileError(path: string, format: string): SqueezeError {
  const cat = CAT[format] ?? 'zcat'
  const how =
    path === 'stdin'
      ? `pipe it through ${cat} (${cat} FILE | squeeze produce --source stdin ...)`
      : `decompress it first (${cat} ${path} > FILE), or pipe it in (${cat} ${path} | squeeze produce --source stdin ...)`
  return new SqueezeError(ErrorCodes.SOURCE, `${path} is ${format}-compressed, not text lines: ${how}`)
}
