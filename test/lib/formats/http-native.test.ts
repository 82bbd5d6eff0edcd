import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseCombinedLine } from '../../../lib/formats/combined-log.js'
import { maxHttpRequestBytes, writeHttpRequestAt } from '../../../lib/formats/http-request-writer.js'
import { copyEncodedLine, encodeHttpLineNative, httpLinesImplementation } from '../../../lib/formats/http-native.js'
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
  encodeHttpLine: (src: Uint8Array, start: number, end: number, out: Uint8Array) => number
}
/** Struct, and each text's NUL and padding: what a message can take beyond its line's bytes. */
const OVERHEAD_BYTES = 176 + 14 * 8

/**
 * What the native path makes of `line`, placed between other bytes (a quote, a bracket, a space after it: a read
 * past the line's end would change the answer): the record's bytes, written into dirty memory only as long as the
 * bound, or null for "not mine".
 */
function viaNative(line: string, after = '" ]"'): Buffer | null {
  const bytes = Buffer.concat([Buffer.from('xx\n'), Buffer.from(line), Buffer.from(after)])
  const end = bytes.length - Buffer.byteLength(after)
  const out = Buffer.alloc(end - 3 + OVERHEAD_BYTES, 0xa5)
  const size = binding.encodeHttpLine(bytes, 3, end, out)
  if (size < 0) return null
  assert.ok(size <= out.length && size % 8 === 0, `size ${size}`)
  return Buffer.from(out.subarray(0, size))
}

/** Whether the native path took `line`; fails unless the text parser takes it too, to the same bytes. */
function assertAgrees(line: string): boolean {
  const native = viaNative(line)
  if (native === null) return false
  const text = viaText(line)
  assert.ok(text !== null, `the native path took a line the text parser refuses: ${JSON.stringify(line)}`)
  if (!native.equals(text))
    assert.fail(
      `bytes differ for ${JSON.stringify(line)}\n  native ${native.toString('hex')}\n  text   ${text.toString('hex')}`
    )
  return true
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

describe('encodeHttpLine: the native path takes only lines the text parser takes, to the same bytes', () => {
  it('is the path this build takes, and the format copies its message as it wrote it', () => {
    const native = process.env['SQUEEZE_HTTP_NATIVE'] !== 'js'
    assert.equal(httpLinesImplementation(), native ? 'native' : 'js')
    const line = Buffer.from(`x\n${lineWith({})}\n`)
    const size = encodeHttpLineNative(line, 2, line.length - 1)
    if (!native) return assert.equal(size, -1)
    const out = Buffer.alloc(size + 20, 0xa5)
    assert.equal(copyEncodedLine(out, new DataView(out.buffer), 7, size), 7 + size)
    assert.deepEqual(out.subarray(7, 7 + size), viaNative(lineWith({})))
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
        const line = Buffer.from(raw).toString('latin1')
        if (viaNative(line, after) !== null) assertAgrees(line)
      }),
      { numRuns: 3000 }
    )
    fc.assert(
      fc.property(mutatedLine(kindLines('http')), token('"] x', 0, 3), (line, after) => {
        const native = viaNative(line, after)
        assert.deepEqual(native, viaNative(line), JSON.stringify([line, after]))
      }),
      { numRuns: 2000 }
    )
  })

  it('refuses arguments out of bounds instead of reading or writing past them', () => {
    const src = Buffer.from(lineWith({}))
    const out = Buffer.alloc(4096)
    assert.ok(binding.encodeHttpLine(src, 0, src.length, out) > 0)
    for (const [start, end] of [
      [0, src.length + 1],
      [5, 4],
      [-1, 3],
      [0.5, 3],
      [Number.NaN, 3],
      [0, Infinity]
    ] as const)
      assert.throws(() => binding.encodeHttpLine(src, start, end, out), TypeError, `${start}, ${end}`)
    assert.throws(() => binding.encodeHttpLine(src, 0, src.length, Buffer.alloc(200)), TypeError)
    assert.throws(
      () => binding.encodeHttpLine(src, 0, src.length, new Uint16Array(4096) as unknown as Uint8Array),
      TypeError
    )
    assert.equal(binding.encodeHttpLine(src, 0, 0, out), -1)
  })

  it('SQUEEZE_HTTP_NATIVE=js: the TypeScript path alone', () => {
    const module = new URL('../../../lib/formats/http-native.js', import.meta.url).href
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import(${JSON.stringify(module)}).then((m) => { const b = Buffer.from('x'); console.log(m.httpLinesImplementation(), m.encodeHttpLineNative(b, 0, 1)) })`
      ],
      { env: { ...process.env, SQUEEZE_HTTP_NATIVE: 'js' }, encoding: 'utf8' }
    )
    assert.equal(child.stdout.trim(), 'js -1', child.stderr)
  })
})
