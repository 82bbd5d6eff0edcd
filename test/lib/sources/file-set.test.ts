import assert from 'node:assert/strict'
import { appendFileSync, copyFileSync, mkdtempSync, renameSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createLogger } from '../../../lib/log/logger.js'
import { FileSet, type FilePosition } from '../../../lib/sources/file-set.js'

const log = createLogger({ level: 'silent', name: 'file-set-test' })

/** Reads a followed file set in the background: its lines by file name, and the last position of each file. */
function follow(options: { glob: string; exclude?: string[]; saved?: FilePosition[] }): {
  lines: string[]
  positions: Map<string, FilePosition>
  waitFor(n: number): Promise<void>
  stop(): Promise<void>
} {
  const abort = new AbortController()
  const lines: string[] = []
  const positions = new Map<string, FilePosition>()
  const files = new FileSet({
    patterns: [{ glob: options.glob, kind: 'syslog' }],
    exclude: options.exclude ?? [],
    follow: true,
    pollMs: 10,
    rotateWaitMs: 50,
    log,
    signal: abort.signal,
    ...(options.saved === undefined ? {} : { saved: options.saved })
  })
  const reading = (async () => {
    for await (const batch of files.batches()) {
      for (const item of batch.items) if (item.kind === 'line') lines.push(item.line)
      positions.set(`${batch.position.dev}:${batch.position.ino}`, batch.position)
    }
  })()
  return {
    lines,
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
})
