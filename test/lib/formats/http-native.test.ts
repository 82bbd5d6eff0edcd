import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseCombinedLine } from '../../../lib/formats/combined-log.js'
import { maxHttpRequestBytes, writeHttpRequestAt } from '../../../lib/formats/http-request-writer.js'
import { httpLinePass, httpLinesImplementation } from '../../../lib/formats/http-native.js'
import type { WrittenValueSink } from '../../../lib/formats/log-format.js'
import {
  combinedLine,
  generatedLine,
  generatedLineWith,
  mutatedLine,
  token,
  type CombinedParts
} from '../../helpers/combined-log-lines.js'
import { CORPUS_FIXTURES, corpusLines, kindLines } from '../../helpers/corpus.js'

/** What the text parser, the format's definition, makes of `line`: the record's bytes, or null where it refuses it. */
function viaText(line: string): Buffer | null {
  let fields
  try {
    fields = parseCombinedLine(line)
  } catch {
    return null
  }
  const buf = Buffer.alloc(maxHttpRequestBytes(fields))
  return buf.subarray(0, writeHttpRequestAt(buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 0, fields))
}

/** The binding itself: these tests hold it to the text parser whichever way SQUEEZE_HTTP_NATIVE points the format. */
const binding = createRequire(import.meta.url)('squeeze-lz4') as {
  encodeHttpLines: (src: Uint8Array, start: number, end: number, out: Uint8Array, table: Int32Array) => number
}
/** Struct, and each text's NUL and padding: what a message can take beyond its line's bytes. */
const OVERHEAD_BYTES = 176 + 14 * 8
/** int32s a line takes in the table: start, text end, message offset, message size. */
const ROW = 4

/** Lines as the producer splits a chunk: at each newline, a CR that ends a line dropped. */
function splitLines(text: string): string[] {
  return text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
}

/**
 * What the native path makes of the lines of `text`, placed between other bytes (a quote, a bracket, a space after
 * it: a read past the chunk's end would change the answer): per line, its record's bytes, or null for "not mine".
 * The output is dirty memory only as long as a call requires, and the table has `rows` rows, so calls stop early
 * and are resumed where they say; each row's bounds and offsets are checked against the bytes.
 */
function nativeLines(text: string, after = '" ]"', rows = 64): { records: (Buffer | null)[]; calls: number } {
  const bytes = Buffer.concat([Buffer.from('xx\n'), Buffer.from(text), Buffer.from(after)])
  const end = bytes.length - Buffer.byteLength(after)
  const out = Buffer.alloc(end - 3 + OVERHEAD_BYTES, 0xa5)
  const table = new Int32Array(ROW * rows + 1)
  const records: (Buffer | null)[] = []
  let calls = 0
  for (let at = 3; at <= end; calls++) {
    const n = binding.encodeHttpLines(bytes, at, end, out, table)
    assert.ok(n >= 1 && n <= rows, `${n} lines of ${rows} rows`)
    let used = 0
    for (let i = 0; i < n; i++) {
      const [start, textEnd, offset, size] = Array.from(table.subarray(ROW * i, ROW * i + ROW))
      const newline = bytes.indexOf(10, at)
      const stop = newline < 0 || newline > end ? end : newline
      assert.deepEqual([start, textEnd], [at, stop > at && bytes[stop - 1] === 13 ? stop - 1 : stop])
      if ((size as number) < 0) records.push(null)
      else {
        assert.ok(offset === used && (size as number) % 8 === 0, `offset ${offset}, size ${size}`)
        records.push(Buffer.from(out.subarray(used, used + (size as number))))
        used += size as number
      }
      at = stop + 1
    }
    assert.equal(table[ROW * n], at)
  }
  return { records, calls }
}

/** The native path's record of one line (no newline in it), or null for "not mine". */
function viaNative(line: string, after?: string): Buffer | null {
  const { records } = nativeLines(line, after)
  assert.equal(records.length, 1)
  return records[0] as Buffer | null
}

/** Whether the native path took every line of `text`; fails unless the text parser takes each too, to the same bytes. */
function assertAgrees(text: string, after?: string): boolean {
  const lines = splitLines(text)
  const { records } = nativeLines(text, after)
  assert.equal(records.length, lines.length)
  let taken = true
  records.forEach((native, i) => {
    const line = lines[i] as string
    if (native === null) return (taken = false)
    const viaParser = viaText(line)
    assert.ok(viaParser !== null, `the native path took a line the text parser refuses: ${JSON.stringify(line)}`)
    if (!native.equals(viaParser))
      assert.fail(
        `bytes differ for ${JSON.stringify(line)}\n  native ${native.toString('hex')}\n  text   ${viaParser.toString('hex')}`
      )
    return true
  })
  return taken
}

/** A plain line to vary one field of. */
const BASE: CombinedParts = {
  ip: '83.149.9.216',
  ident: '-',
  user: '-',
  time: '17/May/2015:10:05:03 +0000',
  method: 'GET',
  target: '/images/kibana-search.png',
  protocol: 'HTTP/1.1',
  status: '200',
  size: '203023',
  referer: 'http://semicomplete.com/',
  agent: 'Mozilla/5.0 (X11; Linux x86_64)'
}
const lineWith = (parts: Partial<CombinedParts>): string => combinedLine({ ...BASE, ...parts })

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const twoDigits = fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, '0'))
/** Timestamps with every field anywhere its digits reach (day 00 and 99, hour 99, years 0000-9999), in any zone. */
const anyTimestamp = fc
  .record({
    day: twoDigits,
    month: fc.oneof(
      fc.constantFrom(...MONTHS),
      fc.constantFrom(...MONTHS).map((m) => m.toUpperCase()),
      fc.constantFrom(...MONTHS).map((m) => m.toLowerCase()),
      fc.constantFrom('Mai', 'Okt', 'Dez', 'Foo', 'Ja', 'Janu')
    ),
    year: fc.oneof(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 1960, max: 2100 }),
      fc.integer({ min: 0, max: 120 })
    ),
    hour: twoDigits,
    minute: twoDigits,
    second: twoDigits,
    sign: fc.constantFrom('+', '-', ' ', 'x'),
    offset: fc.oneof(
      fc.constantFrom('0000', '0530', '0800', '1400', '0545', '1200', '2359', '9999'),
      fc.tuple(twoDigits, twoDigits).map(([h, m]) => h + m)
    )
  })
  .map(
    ({ day, month, year, hour, minute, second, sign, offset }) =>
      `${day}/${month}/${String(year).padStart(4, '0')}:${hour}:${minute}:${second} ${sign}${offset}`
  )

/** A sink that writes each record into a buffer of its own, as Producer.sendWritten does where no batch has room. */
function collectingSink(records: Buffer[]): WrittenValueSink {
  return {
    put(maxValueBytes, write, arg) {
      const buf = Buffer.alloc(maxValueBytes + 16, 0xa5)
      const end = write(buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 8, arg)
      records.push(buf.subarray(8, end))
      return undefined
    }
  }
}

describe('encodeHttpLines: the native path takes only lines the text parser takes, to the same bytes', () => {
  it("is the path this build takes; a pass puts the records it read, and is the caller's alone until released", () => {
    const native = process.env['SQUEEZE_HTTP_NATIVE'] !== 'js'
    assert.equal(httpLinesImplementation(), native ? 'native' : 'js')
    const pass = httpLinePass()
    if (!native) return assert.equal(pass, null)
    assert.ok(pass !== null)
    const lines = [lineWith({}), 'not an access line', lineWith({ status: '404' })]
    const chunk = Buffer.from(`x\n${lines.join('\r\n')}\n`)
    pass.read(chunk, 2, chunk.length - 1)
    assert.deepEqual([pass.count, pass.next], [3, chunk.length])
    assert.deepEqual(
      lines.map((_, i) => [pass.taken(i), chunk.toString('utf8', pass.start(i), pass.end(i))]),
      lines.map((line, i) => [i !== 1, line])
    )
    const records: Buffer[] = []
    for (const i of [0, 2]) assert.equal(pass.put(i, collectingSink(records)), undefined)
    assert.deepEqual(records, [viaNative(lines[0] as string), viaNative(lines[2] as string)])
    const other = httpLinePass()
    assert.ok(other !== null && other !== pass, 'a second caller gets a pass of its own')
    pass.release()
    other.release()
    assert.equal(httpLinePass(), other, 'a released pass is handed out again')
  })

  it('a chunk of many lines: the same records whatever the table and scratch let one call take', () => {
    const lines = [...kindLines('http').slice(0, 150), '', 'caf\u00e9 - - x', lineWith({ agent: 'a\r' })]
    const text = lines.map((line, i) => (i % 3 === 0 ? `${line}\r` : line)).join('\n')
    const all = nativeLines(text, '\n', 1024)
    // A message is longer than its line, so a scratch of the chunk's length and a line's overhead is not enough.
    assert.ok(all.calls > 1, `${all.calls} calls`)
    for (const rows of [1, 2, 7]) {
      const few = nativeLines(text, '\n', rows)
      assert.deepEqual(few.records, all.records, `${rows} rows a call`)
      assert.ok(few.calls >= Math.ceil(lines.length / rows))
    }
    assert.equal(all.records.length, lines.length)
    assert.deepEqual(all.records.slice(150, 152), [null, null], 'the empty and the non-ASCII line')
    assert.ok(all.records[152] !== null, 'a CR inside a field is part of it')
    assertAgrees(text, '\n')
  })

  it('every line of every corpus file, and every access line the text parser takes is taken', () => {
    let taken = 0
    for (const { file } of CORPUS_FIXTURES) for (const line of corpusLines(file)) if (assertAgrees(line)) taken++
    const access = kindLines('http')
    // Every corpus access line is plain ASCII with the canonical timestamp, but one that is not combined format.
    assert.equal(taken, access.length - 1)
    assert.equal(access.filter((line) => viaText(line) !== null).length, taken)
  })

  it("fuzzed lines: corpus lines edited at the grammar's edges, and generated ones", () => {
    let taken = 0
    let left = 0
    fc.assert(
      fc.property(fc.oneof(mutatedLine(kindLines('http')), generatedLine), (line) => {
        if (assertAgrees(line)) taken++
        else left++
      }),
      { numRuns: 8000 }
    )
    assert.ok(taken > 500 && left > 500, `taken ${taken}, left ${left}`)
  })

  it('timestamps: odd zones, leap days, month names in other case, fields out of range, years 0-99', () => {
    const fixed = [
      '29/Feb/2016:12:00:00 +0530',
      '29/Feb/2015:12:00:00 +0000',
      '29/Feb/1900:00:00:00 +0000',
      '29/Feb/2000:23:59:59 -0800',
      '31/Dec/2016:23:59:60 +1400',
      '01/Jan/1970:00:00:00 +0001',
      '00/Jan/1970:00:00:00 +0000',
      '99/Dec/9999:99:99:99 -9999',
      '01/Jan/0000:00:00:00 +0000',
      '01/Jan/0099:00:00:00 +0000',
      '01/Jan/0100:00:00:00 +0000',
      '17/may/2015:10:05:03 +0000',
      '17/MAY/2015:10:05:03 +0000',
      '17/May/2015:10:05:03 +000',
      '17/May/2015:10:05:03  +0000',
      '17/May/2015:10:05:03 +00000',
      '17/May/2015 10:05:03 +0000',
      '17/May/15:10:05:03 +0000',
      '1/May/2015:10:05:03 +0000'
    ]
    for (const time of fixed) assertAgrees(lineWith({ time }))
    // The canonical form with a month the text parser knows is the native path's.
    assert.ok(viaNative(lineWith({ time: '29/Feb/2016:12:00:00 +0530' })) !== null)
    assert.ok(viaNative(lineWith({ time: '99/Dec/9999:99:99:99 -9999' })) !== null)
    assert.equal(viaNative(lineWith({ time: '17/may/2015:10:05:03 +0000' })), null)
    let taken = 0
    fc.assert(
      fc.property(
        fc.oneof(
          anyTimestamp.map((time) => lineWith({ time })),
          generatedLineWith(anyTimestamp)
        ),
        (line) => {
          if (assertAgrees(line)) taken++
        }
      ),
      { numRuns: 6000 }
    )
    assert.ok(taken > 300, `taken ${taken}`)
  })

  it('sizes of 15, 16 and more digits, dashes, empty and dash-only fields, queries, methods', () => {
    const lines = [
      ...['999999999999999', '9007199254740993', '18446744073709551615', '18446744073709551616'].map((size) =>
        lineWith({ size })
      ),
      lineWith({ size: '0'.repeat(40) + '7' }),
      lineWith({ size: '9'.repeat(60) }),
      lineWith({ size: '-' }),
      lineWith({ size: '' }),
      lineWith({ size: '--' }),
      lineWith({ ident: '--', user: '-' }),
      lineWith({ referer: '', agent: '' }),
      lineWith({ referer: '-', agent: '-' }),
      lineWith({ referer: '- ', agent: ' -' }),
      lineWith({ target: '?' }),
      lineWith({ target: '?a=b' }),
      lineWith({ target: '/p?' }),
      lineWith({ target: '/p?a=b?c=d' }),
      lineWith({ target: '-' }),
      lineWith({ protocol: 'HTTP/2' }),
      lineWith({ protocol: 'HTTP/2.' }),
      lineWith({ protocol: 'HTTP/10' }),
      lineWith({ protocol: 'HTTP/1.10' }),
      lineWith({ status: '1000' }),
      lineWith({ status: '20' }),
      ...['UNKNOWN', 'OTHER', 'GETS', 'GE', 'TRACE', 'CONNECT', 'OPTIONS', 'DELETE', 'PROPFIND'].map((method) =>
        lineWith({ method })
      ),
      lineWith({ ip: 'caf\u00e9' }),
      lineWith({ agent: 'Mozilla \u00e9' }),
      lineWith({ agent: 'nul\0byte' }),
      `${lineWith({})} `,
      ` ${lineWith({})}`,
      ''
    ]
    for (const line of lines) assertAgrees(line)
    assert.ok(viaNative(lineWith({ size: '9'.repeat(60) })) !== null, 'a long size is taken, its low 64 bits kept')
    assert.equal(viaNative(lineWith({ ip: 'caf\u00e9' })), null)
  })

  it('huge lines: a 2 MiB user agent, path and query, each byte copied', () => {
    const big = 'a'.repeat(2 * 1024 * 1024)
    for (const parts of [{ agent: big }, { target: `/${big}?${big}` }, { referer: big, agent: big }]) {
      const line = lineWith(parts)
      assert.ok(assertAgrees(line), 'a huge plain line is taken')
    }
    assert.equal(viaNative(lineWith({ agent: `${big}\u00e9` })), null)
  })

  it('any bytes: never more than the text parser takes, and after any tail', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 4 }), (raw, after) => {
        assertAgrees(Buffer.from(raw).toString('latin1'), after)
      }),
      { numRuns: 3000 }
    )
    fc.assert(
      fc.property(mutatedLine(kindLines('http')), token('"] x', 0, 3), (line, after) => {
        assert.deepEqual(nativeLines(line, after).records, nativeLines(line).records, JSON.stringify([line, after]))
      }),
      { numRuns: 2000 }
    )
  })

  it('refuses arguments out of bounds instead of reading or writing past them', () => {
    const src = Buffer.from(lineWith({}))
    const out = Buffer.alloc(src.length + OVERHEAD_BYTES)
    const table = new Int32Array(ROW + 1)
    assert.equal(binding.encodeHttpLines(src, 0, src.length, out, table), 1)
    assert.ok((table[3] as number) > 0)
    for (const [start, end] of [
      [0, src.length + 1],
      [5, 4],
      [-1, 3],
      [0.5, 3],
      [Number.NaN, 3],
      [0, Infinity]
    ] as const)
      assert.throws(() => binding.encodeHttpLines(src, start, end, out, table), TypeError, `${start}, ${end}`)
    const call = (o: unknown, t: unknown): number =>
      binding.encodeHttpLines(src, 0, src.length, o as Uint8Array, t as Int32Array)
    assert.throws(() => call(out.subarray(0, out.length - 1), table), TypeError, 'out one byte short of the bound')
    assert.throws(() => call(new Uint16Array(4096), table), TypeError)
    assert.throws(() => call(out, new Int32Array(ROW)), TypeError, 'a table without the row after the last')
    assert.throws(() => call(out, new Uint32Array(ROW + 1)), TypeError)
    assert.throws(() => call(out, [0, 0, 0, 0, 0]), TypeError)
    assert.equal(binding.encodeHttpLines(src, 0, 0, out, table), 1, 'an empty line is a line')
    assert.deepEqual(Array.from(table), [0, 0, 0, -1, 1])
  })

  it('SQUEEZE_HTTP_NATIVE=js: the TypeScript path alone, for lines and for record values', () => {
    const module = new URL('../../../lib/formats/http-native.js', import.meta.url).href
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import(${JSON.stringify(module)}).then((m) => { console.log(m.httpLinesImplementation(), m.httpLinePass(), m.checkHttpValues({ bytes: Buffer.alloc(0), table: new Int32Array(0), count: 0, stride: 4, startColumn: 2 })) })`
      ],
      { env: { ...process.env, SQUEEZE_HTTP_NATIVE: 'js' }, encoding: 'utf8' }
    )
    assert.equal(child.stdout.trim(), 'js null null', child.stderr)
  })
})
