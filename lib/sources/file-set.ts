import { createHash } from 'node:crypto'
import { open, readdir, stat, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join, matchesGlob, resolve } from 'node:path'
import type { Logger } from '../log/logger.js'
import type { RecordHeader } from '../protocol/record.js'
import { compressedFileFormat, compressedFileFormatAt, compressedSkipMessage } from '../formats/compressed-file.js'
import { CriJoiner, criHeaders } from './cri.js'
import { chunkLines, READ_ONCE_BYTES } from './line-chunks.js'
import { matchPaths } from './match-files.js'
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, lineItem, utf8Boundary } from './line-splitter.js'
import type { LineChunk, SourceItem } from './source.js'

/** One glob of a file set, with the log kind of the files it matches. */
export interface FilePattern {
  readonly glob: string
  readonly kind: string
}

/** Where reading of one file got to: what a state file or the positions topic keeps. */
export interface FilePosition {
  readonly path: string
  readonly dev: number
  readonly ino: number
  /** sha256 of the file's first `fingerprintBytes` bytes: the same inode holding other bytes is another file. */
  readonly fingerprint: string
  readonly fingerprintBytes: number
  /** Bytes of whole lines (or pieces of split lines) handed on. */
  readonly offset: number
  /** Read to its end after it was rotated away, and released: nothing more to read from it. */
  readonly done?: boolean
}

/** Lines of one file read together, and the offset just after the last of them. */
export interface FileBatch {
  readonly path: string
  readonly kind: string
  /** The lines, or with kind `cri` the messages they complete. */
  readonly items: readonly SourceItem[]
  /**
   * The same lines as read, whole and undecoded (a view of the read buffer, valid until the next batch is asked
   * for), for a reader that takes them in place; absent for `cri`, whose messages join lines.
   */
  readonly lines?: LineChunk
  /** Headers every record of the file carries beside the source header (a container log's pod, ...). */
  readonly headers: readonly RecordHeader[]
  /** The file's position once these lines are shipped. */
  readonly position: FilePosition
  /**
   * How often the file was rewound (FileSet.rewind) before these lines were read: acknowledgements of lines read
   * before a rewind do not move its saved position past the lines read again after it.
   */
  readonly generation: number
}

export interface FileSetOptions {
  readonly patterns: readonly FilePattern[]
  readonly exclude?: readonly string[]
  /** Keep reading as files grow and appear (default true); false reads each matched file to its end once. */
  readonly follow?: boolean
  readonly pollMs?: number
  /** How long a file rotated away is still read after its name points elsewhere (default 5 s: rotate_wait). */
  readonly rotateWaitMs?: number
  readonly readSizeBytes?: number
  readonly maxLineBytes?: number
  readonly onLineSplit?: () => void
  /** Positions saved before: each file is read on from there (see FileSet's reconciliation). */
  readonly saved?: readonly FilePosition[]
  readonly log: Logger
  readonly onLost?: (position: FilePosition) => void
  /** A file the patterns match that is compressed (gzip, zstd, ...): left unread, said once. */
  readonly onCompressedFile?: (path: string, format: string) => void
  readonly signal?: AbortSignal
}

/** The kind of files in the CRI log format (/var/log/containers): messages sent as they are, with pod headers. */
export const CRI_KIND = 'cri'

/** Bytes that identify a file beside its inode, as Filebeat's fingerprint: enough to tell two log files apart. */
const FINGERPRINT_BYTES = 256
const NEWLINE = 0x0a
const CR = 0x0d
const NO_BYTES = Buffer.alloc(0)
const MIN_READ_BYTES = 16 * 1024

interface Identity {
  readonly dev: number
  readonly ino: number
  /** When the inode last changed (a stat's), where known: a number freed and used again gets a new one. */
  readonly ctimeMs?: number
}

function keyOf(id: Identity): string {
  return `${id.dev}:${id.ino}`
}

/** sha256 of the first `bytes` bytes of an open file, or null when it holds fewer. */
async function fingerprintOf(handle: FileHandle, bytes: number): Promise<string | null> {
  const buffer = Buffer.alloc(bytes)
  const { bytesRead } = await handle.read(buffer, 0, bytes, 0)
  return bytesRead < bytes ? null : createHash('sha256').update(buffer).digest('hex')
}

async function fingerprintAt(path: string, bytes: number): Promise<string | null> {
  const handle = await open(path, 'r').catch(() => undefined)
  if (handle === undefined) return null
  try {
    return await fingerprintOf(handle, bytes)
  } finally {
    await handle.close()
  }
}

/** The read buffer the files of a set share, grown (up to the longest line held) for a line longer than it. */
interface ReadBuffer {
  /** Buffer `slot` (one read into while the other's lines are taken), at least `bytes` long up to maxLineBytes + 1. */
  at(bytes: number, slot: 0 | 1): Buffer
  readonly maxLineBytes: number
}

/** A read in flight into `buf`, after `carried` bytes carried over from the read before. */
interface Read {
  readonly buf: Buffer
  readonly carried: number
  readonly pending: Promise<{ bytesRead: number }>
}

/** One file being read: its handle (kept open, so a file renamed or deleted is still read to its end). */
class TrackedFile {
  /** Bytes read so far; `carry` (or the CRI splitter) holds those of a line not finished yet. */
  private readOffset: number
  private fingerprint = ''
  private fingerprintBytes = 0
  /** Since when the file's name points elsewhere; null while it is the file its pattern matches. */
  rotatedAt: number | null = null
  /**
   * With kind `cri`: a line at a time, partial lines joined; their bytes stay before the shipped offset until
   * joined. Other kinds are read as whole lines in place (LineChunk), with no copy per line.
   */
  private cri: { readonly splitter: LineSplitter; readonly joiner: CriJoiner } | null
  /** The bytes after the last newline read (a copy): the start of a line, moved to the front of the next read. */
  private carry: Buffer = NO_BYTES
  /** Whether the line being read was already cut (longer than maxLineBytes): counted once. */
  private splitting = false
  private headers: readonly RecordHeader[]
  /** The set's rewinds before this file's last one (or its start): each batch carries it. */
  private generation: number
  /** A rewind asked for, done before the file's next read. */
  private rewindTo: { readonly offset: number; readonly generation: number } | null = null
  /** Not read while its lines wait to be read again (FileSet.pause), nor released. */
  paused = false

  constructor(
    private readonly handle: FileHandle,
    readonly id: Identity,
    public path: string,
    readonly kind: string,
    offset: number,
    private readonly buffer: ReadBuffer,
    generation: number,
    private readonly onLineSplit?: () => void
  ) {
    this.readOffset = offset
    this.generation = generation
    this.cri = this.newCri()
    this.headers = kind === CRI_KIND ? criHeaders(path) : []
  }

  private newCri(): TrackedFile['cri'] {
    const { maxLineBytes } = this.buffer
    return this.kind === CRI_KIND
      ? {
          splitter: new LineSplitter(maxLineBytes, this.onLineSplit),
          joiner: new CriJoiner(maxLineBytes, this.onLineSplit)
        }
      : null
  }

  private batch(items: readonly SourceItem[], done = false): FileBatch {
    const { path, kind, headers, generation } = this
    return { path, kind, items, headers, position: this.position(done), generation }
  }

  /** Asks for the file to be read again from `offset` (a line's start) before its next read, in `generation`. */
  rewind(offset: number, generation: number): void {
    this.rewindTo = { offset, generation }
    this.paused = false
  }

  /** Whether a rewind waits; then the bytes read so far are dropped and reading starts again at its offset. */
  applyRewind(): boolean {
    if (this.rewindTo === null) return false
    this.readOffset = this.rewindTo.offset
    this.generation = this.rewindTo.generation
    this.rewindTo = null
    this.carry = NO_BYTES
    this.splitting = false
    this.cri = this.newCri()
    return true
  }

  /** Whether reading stops where it is: the file is paused, or a rewind waits. */
  private get interrupted(): boolean {
    return this.paused || this.rewindTo !== null
  }

  /** A batch of whole lines in place; its items are decoded only if asked for. */
  private chunkBatch(lines: LineChunk): FileBatch {
    const { path, kind, headers, generation } = this
    return {
      path,
      kind,
      headers,
      generation,
      position: this.position(),
      lines,
      get items() {
        return chunkLines(lines, true)
      }
    }
  }

  /** The messages CRI lines complete. */
  private criItems(lines: readonly Buffer[]): SourceItem[] {
    const { splitter, joiner } = this.cri as NonNullable<TrackedFile['cri']>
    const items: SourceItem[] = []
    const consumed = splitter.consumed
    for (let i = 0; i < lines.length; i++) {
      const item = joiner.push(lines[i] as Buffer, consumed[i] ?? 0)
      if (item !== null) items.push(item)
    }
    return items
  }

  get key(): string {
    return keyOf(this.id)
  }

  /** Offset after the last line handed on. */
  get shipped(): number {
    const held = this.cri === null ? this.carry.length : this.cri.splitter.pendingBytes + this.cri.joiner.pendingBytes
    return this.readOffset - held
  }

  async size(): Promise<number> {
    return (await this.handle.stat()).size
  }

  position(done = false): FilePosition {
    const { dev, ino } = this.id
    const { fingerprint, fingerprintBytes } = this
    return { path: this.path, dev, ino, fingerprint, fingerprintBytes, offset: this.shipped, ...(done ? { done } : {}) }
  }

  /**
   * The fingerprint once the file holds its first bytes: taken from the start, whatever was read. `first`: the
   * bytes of a read from the file's start, which hold them when long enough (no stat and read of their own).
   */
  private async takeFingerprint(first?: Buffer): Promise<void> {
    if (this.fingerprintBytes === FINGERPRINT_BYTES) return
    if (first !== undefined && first.length >= FINGERPRINT_BYTES) {
      this.fingerprint = createHash('sha256').update(first.subarray(0, FINGERPRINT_BYTES)).digest('hex')
      this.fingerprintBytes = FINGERPRINT_BYTES
      return
    }
    const size = Math.min(FINGERPRINT_BYTES, await this.size())
    const buffer = Buffer.alloc(size)
    const { bytesRead } = await this.handle.read(buffer, 0, size, 0)
    this.fingerprint = createHash('sha256').update(buffer.subarray(0, bytesRead)).digest('hex')
    this.fingerprintBytes = bytesRead
  }

  /** Whether the file now holds fewer bytes than were read, or other first bytes: truncated (copytruncate). */
  async truncated(): Promise<boolean> {
    // Nothing read and no first bytes to compare: nothing to lose (and no stat before a new file's first read).
    if (this.readOffset === 0 && this.fingerprintBytes === 0) return false
    if ((await this.size()) < this.readOffset) return true
    if (this.fingerprintBytes === 0) return false
    const now = await fingerprintOf(this.handle, this.fingerprintBytes)
    return now !== this.fingerprint
  }

  /** Starts a read of `handle` from this file's read offset into the buffer `slot`, after the carried bytes. */
  private startRead(handle: FileHandle, slot: 0 | 1): Read {
    const carried = this.carry.length
    // Room for a read of its own after the carried bytes: the buffer grows for a long line, up to maxLineBytes.
    const buf = this.buffer.at(carried + MIN_READ_BYTES, slot)
    this.carry.copy(buf, 0)
    return { buf, carried, pending: handle.read(buf, carried, buf.length - carried, this.readOffset) }
  }

  /**
   * The batch of the lines a read completed (null for none), or undefined at the end of the file. Whole lines are
   * handed on in place; the bytes after the last newline are carried to the next read.
   */
  private async finishRead(handle: FileHandle, read: Read): Promise<FileBatch | null | undefined> {
    const { bytesRead } = await read.pending
    if (bytesRead === 0) return undefined
    const from = this.readOffset
    this.readOffset += bytesRead
    const { buf, carried } = read
    // Before the batch's position is taken; the buffer's bytes stay as read (the fingerprint reads into its own).
    if (handle === this.handle)
      await this.takeFingerprint(from === 0 ? buf.subarray(carried, carried + bytesRead) : undefined)
    const end = carried + bytesRead
    // The carried bytes hold no newline, so one found is in what this read added.
    const last = buf.lastIndexOf(NEWLINE, end - 1)
    if (last >= 0) {
      this.carry = end === last + 1 ? NO_BYTES : Buffer.from(buf.subarray(last + 1, end))
      this.splitting = false
      return this.chunkBatch({ bytes: buf, end: last })
    }
    if (end <= this.buffer.maxLineBytes) {
      this.carry = Buffer.from(buf.subarray(0, end))
      return null
    }
    // More than maxLineBytes with no newline: the line's first piece is handed on as a line of its own. A line of
    // exactly maxLineBytes is not cut: the byte after it (its newline) is read before anything is cut.
    const cut = utf8Boundary(buf.subarray(0, this.buffer.maxLineBytes))
    if (!this.splitting) this.onLineSplit?.()
    this.splitting = true
    this.carry = Buffer.from(buf.subarray(cut, end))
    return this.chunkBatch({ bytes: buf, end: cut })
  }

  /** One read of `handle` from this file's read offset, as finishRead has it. */
  private async readBatch(handle: FileHandle): Promise<FileBatch | null | undefined> {
    if (this.cri === null) return this.finishRead(handle, this.startRead(handle, 0))
    const buf = this.buffer.at(0, 0)
    const { bytesRead } = await handle.read(buf, 0, buf.length, this.readOffset)
    if (bytesRead === 0) return undefined
    this.readOffset += bytesRead
    if (handle === this.handle) await this.takeFingerprint()
    const items = this.criItems(this.cri.splitter.push(buf.subarray(0, bytesRead)))
    return items.length > 0 ? this.batch(items) : null
  }

  /**
   * Reads to the current end, a batch per read. Whole lines are read ahead: the next read goes into the other
   * buffer while the caller takes a batch's lines, so the file is read while they are encoded (a read waited for
   * in turn costs a thread-pool round trip per batch, as readFileChunks found).
   */
  async *drain(): AsyncGenerator<FileBatch> {
    if (this.cri !== null) {
      for (;;) {
        if (this.interrupted) return
        const batch = await this.readBatch(this.handle)
        if (batch === undefined) return
        if (batch !== null) yield batch
      }
    }
    let slot: 0 | 1 = 0
    let read: Read | null = this.startRead(this.handle, slot)
    try {
      for (;;) {
        const { readOffset, carry, splitting } = this
        const batch = await this.finishRead(this.handle, read)
        read = null
        if (batch === undefined) return
        if (this.interrupted) {
          // Paused or rewound meanwhile: the read is dropped as if not made, its lines read again later.
          Object.assign(this, { readOffset, carry, splitting })
          return
        }
        slot = slot === 0 ? 1 : 0
        read = this.startRead(this.handle, slot)
        if (batch !== null) yield batch
      }
    } finally {
      // A read may still be in flight when the caller stops early: its bytes are not counted as read.
      await read?.pending.catch(() => undefined)
    }
  }

  /** The line the file ends with when it has no newline: handed on once the file is done with. */
  finish(done: boolean): FileBatch | null {
    const items: SourceItem[] = []
    if (this.cri === null) {
      const rest = this.carry
      this.carry = NO_BYTES
      this.splitting = false
      if (rest.length > 0) items.push(lineItem(rest[rest.length - 1] === CR ? rest.subarray(0, -1) : rest))
    } else {
      const rest = this.cri.splitter.end()
      if (rest !== null) items.push(...this.criItems([rest]))
      const held = this.cri.joiner.flush()
      if (held !== null) items.push(held)
    }
    if (items.length === 0) return null
    return this.batch(items, done)
  }

  /** Reads `copy` (a copytruncate's copy of this file) on from this file's offset, then starts this file again at 0. */
  async *restartAfterCopy(copy: string | null): AsyncGenerator<FileBatch> {
    if (copy !== null) {
      const handle = await open(copy, 'r')
      try {
        for (;;) {
          const batch = await this.readBatch(handle)
          if (batch === undefined) break
          if (batch !== null) yield batch
        }
      } finally {
        await handle.close()
      }
    }
    const rest = this.finish(false)
    if (rest !== null) yield rest
    this.readOffset = 0
    this.fingerprint = ''
    this.fingerprintBytes = 0
  }

  /** Whether `position` describes this file as it is now: same first bytes. */
  async matches(position: FilePosition): Promise<boolean> {
    if (position.fingerprintBytes === 0) return true
    return (await fingerprintOf(this.handle, position.fingerprintBytes)) === position.fingerprint
  }

  setFingerprint(position: FilePosition): void {
    this.fingerprint = position.fingerprint
    this.fingerprintBytes = position.fingerprintBytes
  }

  close(): Promise<void> {
    return this.handle.close()
  }
}

/** Files in the same folder that logrotate may have moved or copied `path` to: app.log.1, app.log-20250101. */
async function rotatedSiblings(path: string): Promise<string[]> {
  const dir = dirname(path)
  const name = basename(path)
  const names = await readdir(dir).catch(() => [] as string[])
  return names.filter((n) => n.startsWith(`${name}.`) || n.startsWith(`${name}-`)).map((n) => join(dir, n))
}

/** Whether the file at `path` starts with the bytes `position`'s fingerprint was taken of. */
async function sameStart(path: string, position: FilePosition): Promise<boolean> {
  if (position.fingerprintBytes === 0) return true
  return (await fingerprintAt(path, position.fingerprintBytes)) === position.fingerprint
}

/** The first of `paths` whose first bytes are `position`'s and that holds at least its offset. */
async function findCopy(paths: readonly string[], position: FilePosition): Promise<string | null> {
  for (const path of paths) {
    const s = await stat(path).catch(() => undefined)
    if (s === undefined || s.size < position.offset) continue
    if (await sameStart(path, position)) return path
  }
  return null
}

/**
 * Files matching a set of globs, read on as they grow, picked up as they appear, and followed across rotation:
 * each is known by device and inode, and by a fingerprint of its first bytes, so a file renamed by logrotate is
 * the same file under its new name (read to its end, then released after rotateWaitMs), a copytruncate is
 * recognised, and an inode reused for another file is not mistaken for the one before.
 */
export class FileSet {
  private readonly files = new Map<string, TrackedFile>()
  private readonly buffer: ReadBuffer
  /** Files done with (read to the end after rotation) since the caller last asked: their final positions. */
  private readonly released: FilePosition[] = []
  private stopped = false
  /**
   * Rewinds of any file so far: a rewound file's generation, and a newly opened file's first, so a file opened
   * later under an inode a rewound file had is never taken for that file's reads from before its rewind.
   */
  private rewinds = 0
  private kept: (key: string) => boolean = () => false
  /**
   * Compressed files passed over, by identity, with their inode's change time: each is said once and not opened
   * again at every scan, while an inode number freed and used again for a log file (new change time) is looked at anew.
   */
  private readonly compressed = new Map<string, number | undefined>()

  constructor(private readonly options: FileSetOptions) {
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
    // A read holds at most maxLineBytes + 1 bytes (a longest line and its newline), so no line handed on is longer.
    // The single-file path's read size: a read's lines stay in the CPU's cache while they are encoded.
    const size = Math.min(options.readSizeBytes ?? READ_ONCE_BYTES, maxLineBytes)
    const buffers = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)]
    this.buffer = {
      maxLineBytes,
      at(bytes, slot) {
        const buf = buffers[slot] as Buffer
        if (bytes <= buf.length) return buf
        const bigger = Buffer.allocUnsafe(Math.min(Math.max(bytes, buf.length * 2), maxLineBytes + 1))
        buffers[slot] = bigger
        return bigger
      }
    }
  }

  /** Files by state: `reading` (its pattern matches it) and `rotated` (renamed away, read until released). */
  counts(): { reading: number; rotated: number } {
    let rotated = 0
    for (const f of this.files.values()) if (f.rotatedAt !== null) rotated++
    return { reading: this.files.size - rotated, rotated }
  }

  /** Bytes written to each file but not yet handed on. */
  async lag(): Promise<Array<{ path: string; bytes: number }>> {
    return Promise.all(
      [...this.files.values()].map(async (f) => {
        const size = await f.size().catch(() => 0)
        return { path: f.path, bytes: Math.max(0, size - f.shipped) }
      })
    )
  }

  /** Positions of files released since the last call: the last word on them, saved once shipped. */
  takeReleased(): FilePosition[] {
    return this.released.splice(0)
  }

  /** The lines of every file, a batch per file and read, until the signal aborts (without follow: each file's end). */
  async *batches(): AsyncGenerator<FileBatch> {
    const pollMs = this.options.pollMs ?? 250
    try {
      await this.reconcile(this.options.saved ?? [])
      for (;;) {
        for (const file of [...this.files.values()]) yield* this.read(file)
        if (this.options.follow === false) {
          for (const file of [...this.files.values()]) yield* this.release(file)
          return
        }
        if (this.aborted()) return
        await new Promise((done) => setTimeout(done, pollMs))
        if (this.aborted()) return
        await this.scan()
      }
    } finally {
      await Promise.all([...this.files.values()].map((f) => f.close().catch(() => undefined)))
      this.files.clear()
    }
  }

  /**
   * Ends batches() at its next poll, as the signal does: a caller that gives up on a followed file set (a failed
   * transaction) gets its generator back without waiting for lines that may never come.
   */
  stop(): void {
    this.stopped = true
  }

  private aborted(): boolean {
    return this.stopped || this.options.signal?.aborted === true
  }

  /**
   * Stops reading the file of `key` (positionKey) until rewind(): its lines wait to be read again once the records
   * that failed are sent again, instead of being sent now only to be sent again then. A paused file is not released.
   */
  pause(key: string): void {
    const file = this.files.get(key)
    if (file !== undefined) file.paused = true
  }

  /** Reads the file of `key` on from where pause() stopped it. */
  resume(key: string): void {
    const file = this.files.get(key)
    if (file !== undefined) file.paused = false
  }

  /**
   * Reads the file of `key` again from `offset` (the start of a line) at its next turn; returns the generation its
   * batches carry from then, or null when the file is no longer open (released, or the set stopped).
   */
  rewind(key: string, offset: number): number | null {
    const file = this.files.get(key)
    if (file === undefined) return null
    file.rewind(offset, ++this.rewinds)
    return this.rewinds
  }

  /** `kept(key)`: whether a file rotated away stays open past rotateWaitMs (its lines may be read again). */
  keepOpen(kept: (key: string) => boolean): void {
    this.kept = kept
  }

  private async *read(file: TrackedFile): AsyncGenerator<FileBatch> {
    if (file.paused) return
    if (file.applyRewind())
      this.options.log.debug({ file: file.path }, 'reading the file again from its saved position')
    if (file.rotatedAt === null && (await file.truncated())) {
      // copytruncate: what was appended since the last read is only in the copy.
      const copy = await findCopy(await rotatedSiblings(file.path), file.position())
      this.options.log.info({ file: file.path, copy }, 'file truncated; reading on from its copy, then from its start')
      yield* file.restartAfterCopy(copy)
    }
    yield* file.drain()
    const waited = file.rotatedAt === null ? 0 : Date.now() - file.rotatedAt
    if (file.rotatedAt !== null && waited >= (this.options.rotateWaitMs ?? 5000) && !this.kept(file.key))
      yield* this.release(file)
  }

  private async *release(file: TrackedFile): AsyncGenerator<FileBatch> {
    const rest = file.finish(true)
    if (rest !== null) yield rest
    this.files.delete(file.key)
    this.released.push(file.position(true))
    await file.close()
  }

  /** Every path the patterns match now (excludes left out), with the kind of the first pattern that matches it. */
  private async matching(): Promise<Map<string, string>> {
    const found = new Map<string, string>()
    for (const { glob: pattern, kind } of this.options.patterns) {
      for await (const path of matchPaths(pattern)) {
        const absolute = resolve(path)
        if (found.has(absolute) || isExcluded(path, this.options.exclude ?? [])) continue
        found.set(absolute, kind)
      }
    }
    return found
  }

  /** Picks up files that appeared and notices files whose name now points elsewhere (rotated away). */
  private async scan(): Promise<void> {
    const seen = new Set<string>()
    for (const [path, kind] of await this.matching()) {
      const s = await stat(path).catch(() => undefined)
      if (s === undefined || !s.isFile()) continue
      const key = keyOf(s)
      seen.add(key)
      const known = this.files.get(key)
      if (known !== undefined) {
        known.path = path
        known.rotatedAt = null
        continue
      }
      if (this.knownCompressed(s) || (await this.isCopyOfTracked(path))) continue
      await this.track(path, kind, s, 0)
    }
    for (const file of this.files.values()) {
      if (!seen.has(file.key) && file.rotatedAt === null) file.rotatedAt = Date.now()
    }
    // Compressed files gone from the patterns are forgotten: the set holds only what the globs match now.
    for (const key of this.compressed.keys()) if (!seen.has(key)) this.compressed.delete(key)
  }

  /** A compressed file passed over before, unchanged since. */
  private knownCompressed(id: Identity): boolean {
    const key = keyOf(id)
    return this.compressed.has(key) && this.compressed.get(key) === id.ctimeMs
  }

  /** A new file whose first bytes are a followed file's: a copy (copytruncate), whose lines that file already has. */
  private async isCopyOfTracked(path: string): Promise<boolean> {
    for (const file of this.files.values()) {
      const p = file.position()
      if (p.fingerprintBytes === FINGERPRINT_BYTES && (await sameStart(path, p))) return true
    }
    return false
  }

  /** Opens a file to read from `offset`; `rotated` for one whose name no longer matches, read to its end. */
  private async track(
    path: string,
    kind: string,
    id: Identity,
    offset: number,
    saved?: FilePosition,
    rotated = false
  ): Promise<void> {
    const identity = { dev: id.dev, ino: id.ino }
    const key = keyOf(identity)
    const known = this.compressed.has(key)
    if (this.knownCompressed(id)) return
    const handle = await open(path, 'r').catch(() => undefined)
    if (handle === undefined) return
    const format = await compressedFileFormat(handle)
    if (format !== null) {
      await handle.close()
      this.compressed.set(key, id.ctimeMs)
      if (known) return
      this.options.log.warn({ file: path, format }, compressedSkipMessage(path, format))
      this.options.onCompressedFile?.(path, format)
      return
    }
    this.compressed.delete(key)
    const { buffer, rewinds } = this
    const file = new TrackedFile(handle, identity, path, kind, offset, buffer, rewinds, this.options.onLineSplit)
    if (saved !== undefined) file.setFingerprint(saved)
    if (rotated) file.rotatedAt = Date.now()
    this.files.set(file.key, file)
  }

  /**
   * Start-up: each saved position is matched to a file by inode and first bytes. The file under its name or a
   * rotated name is read on from its offset; a file truncated meanwhile is read on from its copy, then from 0;
   * one gone is counted as lost. Files the patterns match and no position names are read from their start.
   */
  private async reconcile(saved: readonly FilePosition[]): Promise<void> {
    const matching = await this.matching()
    const byKey = new Map<string, { path: string; kind: string; id?: Identity }>()
    for (const [path, kind] of matching) {
      const s = await stat(path).catch(() => undefined)
      if (s !== undefined && s.isFile()) byKey.set(keyOf(s), { path, kind, id: s })
    }
    const claimed = new Set<string>()
    for (const position of saved) {
      if (position.done === true) continue
      const siblings = await rotatedSiblings(position.path)
      const kind = matching.get(position.path) ?? this.kindFor(position.path)
      let found = byKey.get(keyOf(position))
      if (found === undefined) {
        for (const path of siblings) {
          const s = await stat(path).catch(() => undefined)
          if (s !== undefined && keyOf(s) === keyOf(position)) found = { path, kind }
        }
      }
      if (found !== undefined && (await this.resumes(found.path, position))) {
        claimed.add(keyOf(position))
        await this.track(found.path, found.kind, position, position.offset, position, !matching.has(found.path))
        continue
      }
      // The inode holds other bytes, or is gone: the file was truncated (copytruncate) or rotated away.
      const copy = await findCopy(siblings, position)
      if (copy !== null) {
        this.options.log.info({ file: position.path, copy, offset: position.offset }, 'reading on from the copy')
        const s = await stat(copy)
        claimed.add(keyOf(s))
        await this.track(copy, kind, s, position.offset, position, true)
      } else {
        const { path, offset } = position
        const message = 'file rotated away while the shipper was down is gone: its unread lines are lost'
        this.options.log.warn({ file: path, offset }, message)
        this.options.onLost?.(position)
      }
    }
    for (const [key, { path, kind, id }] of byKey) {
      if (claimed.has(key) || this.files.has(key) || id === undefined) continue
      if (await this.isCopyOfTracked(path)) continue
      await this.track(path, kind, id, 0)
    }
  }

  /** Whether the file at `path` is `position`'s file, grown or as it was: same first bytes, at least as long. */
  private async resumes(path: string, position: FilePosition): Promise<boolean> {
    const s = await stat(path).catch(() => undefined)
    if (s === undefined || s.size < position.offset) return false
    return sameStart(path, position)
  }

  private kindFor(path: string): string {
    const { patterns } = this.options
    return patterns.find((p) => matchesGlob(path, p.glob))?.kind ?? patterns[0]?.kind ?? 'http'
  }
}

/**
 * `--file` values: a path or glob, or KIND:GLOB (KIND one of `kinds`) for files of another kind than `defaultKind`.
 * A prefix that is not a kind is part of the path.
 */
export function parseFilePatterns(
  values: readonly string[],
  kinds: readonly string[],
  defaultKind: string
): FilePattern[] {
  return values.map((value) => {
    const colon = value.indexOf(':')
    const prefix = colon < 0 ? '' : value.slice(0, colon)
    return kinds.includes(prefix) ? { glob: value.slice(colon + 1), kind: prefix } : { glob: value, kind: defaultKind }
  })
}

/** Whether `--file` values name more than one plain path: a glob, a kind mapping, or several. */
/** Whether an `--exclude` glob leaves out `path`, as given or made absolute. */
export function isExcluded(path: string, exclude: readonly string[]): boolean {
  const absolute = resolve(path)
  return exclude.some((ex) => matchesGlob(absolute, ex) || matchesGlob(path, ex))
}

/**
 * The first regular file `glob` matches now that no `exclude` glob leaves out: what a file set would read first.
 * Directories, other non-files, compressed files and excluded paths are passed over, as the file set passes them over.
 */
export async function firstFile(glob: string, exclude: readonly string[]): Promise<string | undefined> {
  for await (const path of matchPaths(glob)) {
    if (isExcluded(path, exclude)) continue
    const s = await stat(path).catch(() => undefined)
    if (s?.isFile() === true && (await compressedFileFormatAt(path)) === null) return path
  }
  return undefined
}

export function isFileSet(values: readonly string[], kinds: readonly string[]): boolean {
  const mapped = (v: string): boolean => kinds.includes(v.slice(0, Math.max(0, v.indexOf(':'))))
  return values.length > 1 || values.some((v) => /[*?[{]/.test(v) || mapped(v))
}
