import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createLogger } from '../../../lib/log/logger.js'
import { detectInputKind, inputBytes, recordSource, type ProduceInput } from '../../../lib/pipeline/produce-input.js'
import type { SourceBatch } from '../../../lib/sources/source.js'
import { corpusLines, corpusPath } from '../../helpers/corpus.js'

const log = createLogger({ level: 'silent', name: 'test' })
const lines = { maxLineBytes: 1 << 20, onLineSplit: () => undefined, signal: new AbortController().signal }

function fileInput(file: string, more: Partial<ProduceInput> = {}): ProduceInput {
  const base = { source: 'file', kind: 'auto', file, follow: false, shipper: false, records: undefined }
  return { ...base, rate: undefined, seed: 1, lines, ...more } as ProduceInput
}

describe("produce's input: its kind and its records", () => {
  it("detects a file's kind from its first lines, and a given kind that does not fit is refused", async () => {
    const access = corpusPath('access_apache_semicomplete_2015.log')
    const detected = await detectInputKind(fileInput(access), [], log)
    assert.equal(detected.kind, 'http')
    assert.equal(detected.stdin, undefined)
    const syslog = corpusPath('syslog_mtail_sftp_chroot.log')
    await assert.rejects(detectInputKind(fileInput(syslog, { kind: 'http' }), [], log), /syslog/)
  })

  it("a file set's kind comes from the first file it would read: directories and --exclude'd files passed over", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'produce-input-'))
    try {
      // In name order: a directory, an excluded nginx error log, then the syslog file the set reads first.
      mkdirSync(join(dir, 'a.log'))
      writeFileSync(join(dir, 'b.log'), `${corpusLines('nginx_error_chemfh_2023.log').slice(0, 50).join('\n')}\n`)
      writeFileSync(join(dir, 'c.log'), `${corpusLines('syslog_mtail_sftp_chroot.log').slice(0, 50).join('\n')}\n`)
      const glob = join(dir, '*.log')
      const input = fileInput(glob, { shipper: true })
      const exclude = [join(dir, 'b.log')]
      const detected = await detectInputKind(input, [{ glob, kind: 'auto' }], log, exclude)
      assert.deepEqual(detected.patterns, [{ glob, kind: 'syslog' }])
      // Read once, a set whose every file is excluded matches no file.
      const only = [{ glob: join(dir, 'b.*'), kind: 'nginx-error' }]
      await assert.rejects(detectInputKind(input, only, log, exclude), /no file matches .*b\.\*/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reads a file as lines up to --records, and says how large a file read once is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'produce-input-'))
    try {
      const file = join(dir, 'x.log')
      const text = corpusLines('syslog_mtail_sftp_chroot.log').slice(0, 50)
      writeFileSync(file, `${text.join('\n')}\n`)
      const input = fileInput(file, { kind: 'syslog', records: 7 })
      const detected = await detectInputKind(input, [], log)
      const items = []
      for await (const batch of (await recordSource(input, detected)) as AsyncIterable<SourceBatch>)
        items.push(...batch)
      assert.equal(items.length, 7)
      assert.deepEqual(
        items.map((i) => (i.kind === 'line' ? i.line : null)),
        text.slice(0, 7)
      )
      assert.equal(await inputBytes(input), Buffer.byteLength(`${text.join('\n')}\n`))
      assert.equal(await inputBytes({ ...input, shipper: true }), undefined, 'a file set has no single size')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
