import assert from 'node:assert/strict'
import { isUtf8 } from 'node:buffer'
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  renameSync,
  truncateSync,
  writeFileSync,
  writeSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import {
  readFileBatches,
  readFileChunks,
  readFileLines,
  type FileSourceOptions
} from '../../../lib/sources/file-source.js'

/** `bytes` cut at each newline, as a chunk's lines are. */
function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = []
  let start = 0
  for (let newline = bytes.indexOf(0x0a); newline >= 0; newline = bytes.indexOf(0x0a, start)) {
    lines.push(bytes.subarray(start, newline))
    start = newline + 1
  }
  lines.push(bytes.subarray(start))
  return lines
}

function tempLog(): string {
  return join(mkdtempSync(join(tmpdir(), 'squeeze-follow-')), 'app.log')
}

/** Follows `path` in the background; `until(n)` waits (bounded) for n lines. */
function follow(
  t: TestContext,
  path: string,
  options: Partial<FileSourceOptions> = {}
): { lines: string[]; until(n: number): Promise<void> } {
  const abort = new AbortController()
  const lines: string[] = []
  const reading = (async () => {
    for await (const item of readFileLines(path, { follow: true, pollMs: 10, signal: abort.signal, ...options })) {
      if (item.kind === 'line') lines.push(item.line)
    }
  })()
  t.after(async () => {
    abort.abort()
    await reading
  })
  return {
    lines,
    async until(n) {
      for (let i = 0; i < 1000 && lines.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.ok(lines.length >= n, `expected ${n} lines, got ${lines.length}: ${JSON.stringify(lines)}`)
    }
  }
}

/** Every expected line exactly once, each file's lines in their order. */
function assertExactlyOnce(got: readonly string[], ...files: ReadonlyArray<readonly string[]>): void {
  assert.deepEqual([...got].sort(), files.flat().sort())
  for (const lines of files)
    assert.deepEqual(
      got.filter((l) => lines.includes(l)),
      lines
    )
}

/**
 * Every line of `path` read once with reads of `readSizeBytes`, how many batches they came in, and how many lines
 * came with their bytes (only asked for, and then only where the text would not re-encode to them).
 */
async function readOnce(
  path: string,
  readSizeBytes: number,
  lineBytes = true
): Promise<{ lines: string[]; batches: number; withBytes: number }> {
  const lines: string[] = []
  let batches = 0
  let withBytes = 0
  for await (const batch of readFileBatches(path, { follow: false, readSizeBytes, lineBytes })) {
    batches++
    for (const item of batch) {
      assert.ok(item.kind === 'line')
      if (item.bytes !== undefined) {
        assert.ok(lineBytes, 'bytes given where none were asked for')
        withBytes++
      }
      lines.push(item.line)
    }
  }
  return { lines, batches, withBytes }
}

describe('file source (read once)', () => {
  it('gives every line exactly as written whatever the read size, with or without its bytes: characters across reads, lines longer than a read, empty lines, CRLF, no final newline', async () => {
    const long = `GET /${'x'.repeat(5000)}é`
    const lines = [
      'naïve café',
      '',
      'prix: 12 €',
      long,
      'clef 𝄞 and 😀 emoji',
      'windows line',
      '日本語のログ行',
      'last, unterminated'
    ]
    const path = tempLog()
    writeFileSync(path, `${lines.slice(0, 5).join('\n')}\n${lines[5]}\r\n${lines[6]}\n${lines[7]}`)
    for (const readSizeBytes of [1, 2, 3, 5, 7, 64, 4096, 1024 * 1024]) {
      const read = await readOnce(path, readSizeBytes)
      assert.deepEqual(read.lines, lines, `read size ${readSizeBytes}`)
      // Valid UTF-8 throughout: each line's text encodes back to its bytes, so none are handed on.
      assert.equal(read.withBytes, 0, `read size ${readSizeBytes}`)
      assert.deepEqual(
        (await readOnce(path, readSizeBytes, false)).lines,
        lines,
        `read size ${readSizeBytes}, without the bytes`
      )
    }
  })

  it('hands a large file over in batches of many lines, not a line at a time', async () => {
    const path = tempLog()
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`)
    writeFileSync(path, `${lines.join('\n')}\n`)
    const read = await readOnce(path, 64 * 1024)
    assert.deepEqual(read.lines, lines)
    assert.ok(read.batches < 20, `${read.batches} batches`)
  })

  it('a line is sent as the file holds it, CR dropped: its text, or where that would not encode back to them (invalid UTF-8) its bytes, which later reads never overwrite', async () => {
    const lines = [
      Buffer.from('naïve café'),
      Buffer.from(''),
      Buffer.from([0x61, 0xff, 0xfe, 0xc3, 0x62]),
      Buffer.from(`GET /${'x'.repeat(300)}é`),
      Buffer.from('日本語 😀')
    ]
    const path = tempLog()
    const copies = Array.from({ length: 50 }, (_, i) => lines[i % lines.length] as Buffer)
    // CRLF on every other line, no final newline.
    writeFileSync(
      path,
      Buffer.concat(
        copies.flatMap((line, i) =>
          i === copies.length - 1 ? [line] : [line, Buffer.from(i % 2 === 0 ? '\r\n' : '\n')]
        )
      )
    )
    for (const readSizeBytes of [3, 64, 1024 * 1024]) {
      const items = []
      for await (const batch of readFileBatches(path, { follow: false, readSizeBytes })) items.push(...batch)
      assert.equal(items.length, copies.length, `read size ${readSizeBytes}`)
      let withBytes = 0
      items.forEach((item, i) => {
        assert.ok(item.kind === 'line')
        if (item.bytes !== undefined) withBytes++
        // What a format whose record is the line sends: the bytes where given, else the text's UTF-8.
        assert.deepEqual(item.bytes ?? Buffer.from(item.line), copies[i], `read size ${readSizeBytes}, line ${i}`)
        assert.equal(item.line, copies[i]?.toString('utf8'))
      })
      // Every read holding the invalid line hands its lines' bytes on; with 3-byte reads, others do not.
      const invalid = copies.filter((line) => !isUtf8(line)).length
      assert.ok(
        withBytes >= invalid && (readSizeBytes !== 3 || withBytes < copies.length),
        `read size ${readSizeBytes}: ${withBytes} lines with bytes`
      )
    }
  })

  it('a reader that stops after the first batch ends cleanly, the read already in flight for the next one included', async () => {
    const path = tempLog()
    writeFileSync(path, `${Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n')}\n`)
    let first: string | undefined
    for await (const batch of readFileBatches(path, { follow: false, readSizeBytes: 1024 })) {
      first = batch[0]?.kind === 'line' ? batch[0].line : undefined
      break
    }
    assert.equal(first, 'line 0')
  })

  it('readFileChunks: the whole lines of each read, undecoded, byte for byte whatever the read size, and none split across chunks', async () => {
    const lines = [
      Buffer.from('naïve café'),
      Buffer.from(''),
      Buffer.from([0x61, 0xff, 0xfe, 0xc3, 0x62]),
      Buffer.from(`GET /${'x'.repeat(300)}é`),
      Buffer.from('日本語 😀')
    ]
    const copies = Array.from({ length: 40 }, (_, i) => lines[i % lines.length] as Buffer)
    const path = tempLog()
    // CRLF on every third line, no final newline.
    writeFileSync(
      path,
      Buffer.concat(
        copies.flatMap((line, i) =>
          i === copies.length - 1 ? [line] : [line, Buffer.from(i % 3 === 0 ? '\r\n' : '\n')]
        )
      )
    )
    for (const readSizeBytes of [1, 3, 64, 4096, 1024 * 1024]) {
      const got: Buffer[] = []
      let chunks = 0
      for await (const { bytes, end } of readFileChunks(path, { readSizeBytes })) {
        chunks++
        // Taken apart before the next chunk is asked for: its buffer is read into again.
        for (const line of splitLines(Buffer.from(bytes.subarray(0, end))))
          got.push(line.at(-1) === 0x0d ? line.subarray(0, -1) : line)
      }
      assert.deepEqual(got, copies, `read size ${readSizeBytes}`)
      // One read takes the whole file: its lines up to the last newline, then the unterminated last one at the end.
      assert.ok(readSizeBytes >= 4096 ? chunks === 2 : chunks > 2, `read size ${readSizeBytes}: ${chunks} chunks`)
    }
    writeFileSync(path, '')
    for await (const chunk of readFileChunks(path, {})) assert.fail(`an empty file gave a chunk of ${chunk.end} bytes`)
  })

  it('a file that ends in a newline has no empty last line; an empty file has no lines', async () => {
    const path = tempLog()
    writeFileSync(path, 'a\nb\n')
    assert.deepEqual((await readOnce(path, 3)).lines, ['a', 'b'])
    writeFileSync(path, '')
    assert.deepEqual((await readOnce(path, 3)).lines, [])
  })
})

describe('file source (--follow)', () => {
  it('keeps multi-byte characters whole when they straddle a read boundary', async (t) => {
    const text = ['naïve café', 'prix: 12 €', 'clef 𝄞 and 😀 emoji', 'Grüße aus Köln', '日本語のログ行']
    for (const readSizeBytes of [1, 2, 3, 5, 7]) {
      const path = tempLog()
      writeFileSync(path, `${text.slice(0, 3).join('\n')}\n`)
      const reader = follow(t, path, { readSizeBytes })
      await reader.until(3)
      // A character split across two writes as well: its first bytes arrive, then the rest.
      const rest = Buffer.from(`${text.slice(3).join('\n')}\n`)
      appendFileSync(path, rest.subarray(0, 5))
      await new Promise((resolve) => setTimeout(resolve, 50))
      appendFileSync(path, rest.subarray(5))
      await reader.until(5)
      assert.deepEqual(reader.lines, text, `read size ${readSizeBytes}`)
    }
  })

  it('logrotate create: reads the renamed file to its end, including writes after the rename, then the new file', async (t) => {
    const path = tempLog()
    const writer = openSync(path, 'a') // the application's descriptor, which outlives the rename
    t.after(() => closeSync(writer))
    writeSync(writer, 'old-1\nold-2\n')
    const reader = follow(t, path, { rotateWaitMs: 1000 })
    await reader.until(2)
    writeSync(writer, 'old-3\n') // not read yet when the file is renamed
    renameSync(path, `${path}.1`)
    writeSync(writer, 'old-4\n') // the writer has not reopened its log yet
    writeFileSync(path, 'new-1\n')
    await reader.until(5)
    writeSync(writer, 'old-5\nold-6 without newline') // still before the writer reopens (postrotate)
    appendFileSync(path, 'new-2\n')
    await reader.until(8)
    assertExactlyOnce(
      reader.lines,
      ['old-1', 'old-2', 'old-3', 'old-4', 'old-5', 'old-6 without newline'],
      ['new-1', 'new-2']
    )
  })

  it('copytruncate: lines written after the last read come from the copy, then the file restarts at 0', async (t) => {
    const path = tempLog()
    writeFileSync(path, Array.from({ length: 10 }, (_, i) => `before-${i}\n`).join(''))
    const reader = follow(t, path)
    await reader.until(10)
    // One synchronous sequence: the copy and truncate happen before the reader looks again.
    appendFileSync(path, 'late-1\nlate-2\nlate-3\n')
    copyFileSync(path, `${path}.1`)
    truncateSync(path, 0)
    appendFileSync(path, 'after-1\n')
    await reader.until(14)
    appendFileSync(path, 'after-2\n')
    await reader.until(15)
    assertExactlyOnce(reader.lines, [
      ...Array.from({ length: 10 }, (_, i) => `before-${i}`),
      'late-1',
      'late-2',
      'late-3',
      'after-1',
      'after-2'
    ])
  })

  it('copytruncate: notices the truncation even when the file has grown past the old end before the next look', async (t) => {
    const path = tempLog()
    writeFileSync(path, 'a\nb\n')
    const reader = follow(t, path)
    await reader.until(2)
    appendFileSync(path, 'c\n')
    copyFileSync(path, `${path}-20250101`)
    truncateSync(path, 0)
    const after = Array.from({ length: 20 }, (_, i) => `a longer line written after the truncation ${i}`)
    appendFileSync(path, `${after.join('\n')}\n`)
    await reader.until(23)
    assertExactlyOnce(reader.lines, ['a', 'b', 'c', ...after])
  })
})
