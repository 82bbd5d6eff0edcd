import assert from 'node:assert/strict'
import {
  appendFileSync,
  copyFileSync,
  mkdtempSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { gzipSync, zstdCompressSync } from 'node:zlib'
import { createLogger } from '../../../lib/log/logger.js'
import { FileSet, type FilePosition } from '../../../lib/sources/file-set.js'

const log = createLogger({ level: 'silent', name: 'file-set-test' })

/** Reads a followed file set in the background: its lines by file name, and the last position of each file. */
function follow(options: {
  glob: string
  exclude?: string[]
  saved?: FilePosition[]
  onCompressedFile?: (path: string, format: string) => void
}): {
  files: FileSet
  lines: string[]
  /** Per line read, the generation of the batch it came in. */
  generations: number[]
  positions: Map<string, FilePosition>
  waitFor(n: number): Promise<void>
  stop(): Promise<void>
} {
  const abort = new AbortController()
  const lines: string[] = []
  const generations: number[] = []
  const positions = new Map<string, FilePosition>()
  const files = new FileSet({
    patterns: [{ glob: options.glob, kind: 'syslog' }],
    exclude: options.exclude ?? [],
    follow: true,
    pollMs: 10,
    rotateWaitMs: 50,
    log,
    signal: abort.signal,
    ...(options.saved === undefined ? {} : { saved: options.saved }),
    ...(options.onCompressedFile === undefined ? {} : { onCompressedFile: options.onCompressedFile })
  })
  const reading = (async () => {
    for await (const batch of files.batches()) {
      for (const item of batch.items) {
        if (item.kind !== 'line') continue
        lines.push(item.line)
        generations.push(batch.generation)
      }
      positions.set(`${batch.position.dev}:${batch.position.ino}`, batch.position)
    }
  })()
  return {
    files,
    lines,
    generations,
    positions,
    async waitFor(n) {
      for (let i = 0; i < 500 && lines.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.ok(lines.length >= n, `${n} lines read, got ${JSON.stringify(lines)}`)
    },
    async stop() {
      abort.abort()
      await reading
    }
  }
}

describe('FileSet', () => {
  it('follows a glob across rename rotation and copytruncate, picks up new files and leaves excluded ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-file-set-'))
    const app = join(dir, 'app.log')
    writeFileSync(app, 'one\ntwo\n')
    writeFileSync(join(dir, 'debug.log'), 'excluded\n')
    const set = follow({ glob: join(dir, '*.log'), exclude: [join(dir, 'debug*')] })
    await set.waitFor(2)
    appendFileSync(app, 'three\n')
    renameSync(app, `${app}.1`) // rotated away: still read to its end
    appendFileSync(`${app}.1`, 'four\n')
    writeFileSync(app, 'five\n')
    await set.waitFor(5)
    appendFileSync(app, 'six\n')
    copyFileSync(app, `${app}.2`)
    truncateSync(app, 0)
    appendFileSync(app, 'seven\n')
    writeFileSync(join(dir, 'new.log'), 'eight\n')
    await set.waitFor(8)
    await set.stop()
    assert.deepEqual([...set.lines].sort(), ['eight', 'five', 'four', 'one', 'seven', 'six', 'three', 'two'])
  })

  it('resumes from saved positions: lines already shipped are not read again, a shrunk file is read from its copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-file-set-'))
    const app = join(dir, 'app.log')
    writeFileSync(app, 'one\ntwo\n')
    const first = follow({ glob: app })
    await first.waitFor(2)
    await first.stop()
    const saved = [...first.positions.values()]
    appendFileSync(app, 'three\n')
    copyFileSync(app, `${app}.1`)
    truncateSync(app, 0)
    appendFileSync(app, 'four\n')
    const second = follow({ glob: app, saved })
    await second.waitFor(2)
    await second.stop()
    assert.deepEqual(second.lines, ['three', 'four'])
  })

  it('hands whole lines on as read: longer lines split at maxLineBytes, one that long kept, exact offsets', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-file-set-'))
    const app = join(dir, 'app.log')
    const long = 'é'.repeat(100)
    const text = `a\r\n${long}\nb\n${'x'.repeat(64)}\nhalf`
    writeFileSync(app, text)
    let splits = 0
    const files = new FileSet({
      patterns: [{ glob: app, kind: 'syslog' }],
      follow: false,
      readSizeBytes: 16,
      maxLineBytes: 64,
      onLineSplit: () => splits++,
      log
    })
    const lines: string[] = []
    const offsets: number[] = []
    for await (const batch of files.batches()) {
      if (batch.lines !== undefined) assert.ok(batch.lines.end <= 65)
      for (const item of batch.items) if (item.kind === 'line') lines.push(item.line)
      offsets.push(batch.position.offset)
    }
    // 200 bytes of 'é' at most 64 to a piece, never inside a character: 32, 32, 32 and 4 characters.
    const pieces = ['é'.repeat(32), 'é'.repeat(32), 'é'.repeat(32), 'é'.repeat(4)]
    assert.deepEqual(lines, ['a', ...pieces, 'b', 'x'.repeat(64), 'half'])
    assert.equal(splits, 1)
    assert.equal(offsets.at(-1), Buffer.byteLength(text))
    // Before the last line was released (the file read once ends), the position stopped before it.
    assert.equal(offsets.at(-2), Buffer.byteLength(text) - 'half'.length)
  })

  it('a paused file is not read until rewound; then it is read again from the offset, a generation later, and a file kept open is not released when rotated away, even once deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-file-set-'))
    const app = join(dir, 'app.log')
    writeFileSync(app, 'one\ntwo\n')
    const { dev, ino } = statSync(app)
    const key = `${dev}:${ino}`
    const set = follow({ glob: app })
    let kept = true
    set.files.keepOpen(() => kept)
    await set.waitFor(2)
    set.files.pause(key)
    appendFileSync(app, 'three\n')
    // Rotated away and deleted while paused: the open handle still reads it once rewound.
    renameSync(app, `${app}.1`)
    unlinkSync(`${app}.1`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.deepEqual(set.lines, ['one', 'two'], 'not read while paused')
    assert.deepEqual(set.files.counts(), { reading: 0, rotated: 1 }, 'not released while paused')
    assert.equal(set.files.rewind(key, 'one\n'.length), 1)
    await set.waitFor(4)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.deepEqual(set.files.counts(), { reading: 0, rotated: 1 }, 'kept open past rotateWaitMs')
    kept = false
    for (let i = 0; i < 100 && set.files.counts().rotated > 0; i++) await new Promise((r) => setTimeout(r, 10))
    assert.deepEqual(set.files.counts(), { reading: 0, rotated: 0 }, 'released once no longer kept')
    assert.equal(set.files.rewind(key, 0), null, 'a released file cannot be rewound')
    await set.stop()
    assert.deepEqual(set.lines, ['one', 'two', 'two', 'three'])
    assert.deepEqual(set.generations, [0, 0, 1, 1])
    assert.equal(set.positions.get(key)?.offset, 'one\ntwo\nthree\n'.length)
  })

  it('a file truncated in place (copytruncate) while paused is read again from its copy at the offset once rewound, then from its start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-file-set-'))
    const app = join(dir, 'app.log')
    writeFileSync(app, 'one\ntwo\n')
    const { dev, ino } = statSync(app)
    const key = `${dev}:${ino}`
    const set = follow({ glob: join(dir, '*.log') })
    await set.waitFor(2)
    set.files.pause(key)
    appendFileSync(app, 'three\n')
    // logrotate's copytruncate while paused: the lines from the offset on are only in the copy now, and the file
    // grows again past the offset, so only its first bytes tell it was truncated.
    copyFileSync(app, `${app}.1`)
    truncateSync(app, 0)
    appendFileSync(app, 'four\nfive\n')
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.deepEqual(set.lines, ['one', 'two'], 'not read while paused')
    assert.equal(set.files.rewind(key, 'one\n'.length), 1)
    await set.waitFor(6)
    await new Promise((resolve) => setTimeout(resolve, 100))
    await set.stop()
    assert.deepEqual(set.lines, ['one', 'two', 'two', 'three', 'four', 'five'])
    assert.deepEqual(set.generations, [0, 0, 1, 1, 1, 1])
    assert.equal(set.positions.get(key)?.offset, 'four\nfive\n'.length)
  })

  it("leaves compressed files a glob matches (a rotated log's .gz) unread, said once across scans; the same inode rewritten as text is read", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-file-set-'))
    writeFileSync(join(dir, 'app.log'), 'one\n')
    writeFileSync(join(dir, 'app.log.2.gz'), gzipSync('old line\n'))
    writeFileSync(join(dir, 'app.log.3.zst'), zstdCompressSync('older line\n'))
    const skipped: string[] = []
    const set = follow({
      glob: join(dir, 'app.log*'),
      onCompressedFile: (path, format) => skipped.push(`${path} ${format}`)
    })
    await set.waitFor(1)
    appendFileSync(join(dir, 'app.log'), 'two\n')
    await set.waitFor(2)
    // Many scans later, still said once each.
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.deepEqual(skipped.sort(), [`${join(dir, 'app.log.2.gz')} gzip`, `${join(dir, 'app.log.3.zst')} zstd`])
    // Rewritten in place as text (its inode's change time moves): read as any new file.
    writeFileSync(join(dir, 'app.log.2.gz'), 'now text\n')
    await set.waitFor(3)
    await set.stop()
    assert.deepEqual(set.lines, ['one', 'two', 'now text'])
    assert.equal(skipped.length, 2)
  })
})
