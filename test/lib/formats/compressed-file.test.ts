import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { compressedFileFormatAt, compressedFormat } from '../../../lib/formats/compressed-file.js'
import { LOG_KINDS } from '../../../lib/formats/index.js'
import { kindLines } from '../../helpers/corpus.js'

describe('compressedFormat', () => {
  it('names the files gzip, zstd, bzip2, xz and lz4 write, each by its own tool', () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-compressed-'))
    const text = join(dir, 'app.log')
    writeFileSync(text, 'a log line\nanother\n')
    for (const [tool, format] of [
      ['gzip', 'gzip'],
      ['zstd', 'zstd'],
      ['bzip2', 'bzip2'],
      ['xz', 'xz'],
      ['lz4', 'lz4']
    ] as const) {
      const out = execFileSync(tool, ['-c', text])
      assert.equal(compressedFormat(out), format, tool)
    }
  })

  it('takes no text line for a compressed file: every corpus line, and lines that start like one ("BZh", "(")', async () => {
    for (const kind of LOG_KINDS)
      for (const line of kindLines(kind)) assert.equal(compressedFormat(Buffer.from(`${line}\n`)), null, line)
    for (const line of ['BZh9 1AY&SX: one byte off the block magic', 'BZh9 notes', '(µ/ý', ''])
      assert.equal(compressedFormat(Buffer.from(line)), null, line)
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-compressed-'))
    writeFileSync(join(dir, 'empty.log'), '')
    assert.equal(await compressedFileFormatAt(join(dir, 'empty.log')), null)
    assert.equal(await compressedFileFormatAt(join(dir, 'missing.log')), null)
  })
})
