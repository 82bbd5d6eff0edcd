import assert from 'node:assert/strict'
import fc from 'fast-check'
import { describe, it } from 'node:test'
import { formatFor, type LogKind } from '../../../lib/formats/index.js'
import type { WrittenValueSink } from '../../../lib/formats/log-format.js'
import type { ValueWriter } from '../../../lib/protocol/record-batch-builder.js'
import { kindLines } from '../../helpers/corpus.js'

/** The kinds whose record is the line itself, checked (lineAsValue). */
const CHECKED_KINDS: readonly LogKind[] = ['journald', 'nginx-error', 'dns-dnsmasq', 'dns-zeek', 'syslog']

/** What one write through a sink comes to: the record's bytes as hex, or the error's message. */
function outcome(run: (sink: WrittenValueSink) => unknown): string {
  const into: Buffer[] = []
  const sink: WrittenValueSink = {
    put<T>(max: number, write: ValueWriter<T>, arg: T): undefined {
      const buf = Buffer.alloc(max + 8, 0xa5)
      into.push(buf.subarray(4, write(buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 4, arg)))
      return undefined
    }
  }
  try {
    run(sink)
  } catch (err) {
    return `error: ${(err as Error).message}`
  }
  assert.equal(into.length, 1)
  return (into[0] as Buffer).toString('hex')
}

/** `line`'s bytes between other lines, as a read chunk holds them. */
function inChunk(line: Buffer): { bytes: Buffer; start: number; end: number } {
  const bytes = Buffer.concat([Buffer.from('xx\n'), line, Buffer.from('\nyy')])
  return { bytes, start: 3, end: 3 + line.length }
}

describe('lineAsValue.writeLineBytes: a checked line sent as its own bytes', () => {
  for (const kind of CHECKED_KINDS)
    it(`${kind}: the record writeLine makes, or its error, for every corpus line`, () => {
      const format = formatFor(kind)
      const lines = [...kindLines(kind), '', 'not a line of any kind']
      let sent = 0
      for (const line of lines) {
        const { bytes, start, end } = inChunk(Buffer.from(line))
        const expected = outcome((sink) => format.writeLine?.(line, sink))
        assert.equal(
          outcome((sink) => format.writeLineBytes?.(bytes, start, end, sink)),
          expected,
          JSON.stringify(line)
        )
        if (!expected.startsWith('error')) sent++
      }
      assert.ok(sent > 0, `${kind}: some corpus lines are records`)
    })

  it('bytes that are not valid UTF-8: the text checked, the bytes sent as they are', () => {
    let sentRaw = 0
    for (const kind of CHECKED_KINDS) {
      const format = formatFor(kind)
      const line = kindLines(kind).find((l) => !outcome((sink) => format.writeLine?.(l, sink)).startsWith('error'))
      assert.ok(line !== undefined)
      // A lone 0xff where a space was: the text has U+FFFD there, which the check sees.
      const at = line.indexOf(' ', line.length >> 1)
      const raw = Buffer.concat([Buffer.from(line.slice(0, at)), Buffer.from([0xff]), Buffer.from(line.slice(at + 1))])
      const text = raw.toString('utf8')
      const { bytes, start, end } = inChunk(raw)
      const viaText = outcome((sink) => format.writeLine?.(text, sink))
      const viaBytes = outcome((sink) => format.writeLineBytes?.(bytes, start, end, sink))
      if (viaText.startsWith('error')) assert.equal(viaBytes, viaText, kind)
      else {
        assert.equal(viaBytes, raw.toString('hex'), kind)
        sentRaw++
      }
    }
    assert.ok(sentRaw >= 3, `${sentRaw} kinds took the line`)
  })
})

describe('dns-zeek: the bytes pass (acceptsZeekLine) takes only what the text check takes', () => {
  it('writeLineBytes makes the record, or throws the error, writeLine does, for generated lines near the format', () => {
    const format = formatFor('dns-zeek')
    // Columns from the pieces a numeric column's check turns on: digits, dots, signs, exponents, blanks, non-ASCII.
    const piece = fc.constantFrom('0', '7', '15', '.', '-', '+', 'e', 'x', ' ', '', 'é', '\ufffd', 'Infinity', '0x1f')
    const column = fc.oneof(
      { weight: 29, arbitrary: fc.constantFrom('0', '53', '1.5', '1331901000.000043', '-', 'example.com') },
      { weight: 1, arbitrary: fc.array(piece, { maxLength: 4 }).map((p) => p.join('')) }
    )
    const line = fc
      .tuple(
        fc.oneof(
          { weight: 4, arbitrary: fc.array(column, { minLength: 24, maxLength: 24 }) },
          { weight: 1, arbitrary: fc.array(column, { minLength: 22, maxLength: 26 }) }
        ),
        fc.constantFrom('', '', '', '#')
      )
      .map(([columns, head]) => head + columns.join('\t'))
    let records = 0
    fc.assert(
      fc.property(line, (text) => {
        const { bytes, start, end } = inChunk(Buffer.from(text))
        const expected = outcome((sink) => format.writeLine(text, sink))
        if (!expected.startsWith('error')) records++
        assert.equal(
          outcome((sink) => format.writeLineBytes(bytes, start, end, sink)),
          expected,
          JSON.stringify(text)
        )
      }),
      { numRuns: 5000, seed: 35 }
    )
    assert.ok(records > 0, 'some generated lines are records')
  })
})
