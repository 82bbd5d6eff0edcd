import assert from 'node:assert/strict'
import fc from 'fast-check'
import { describe, it } from 'node:test'
import { acceptsDnsmasqLine, DNSMASQ_LINE } from '../../../lib/formats/dnsmasq.js'
import type { LogKind } from '../../../lib/formats/index.js'
import { acceptsNginxErrorLine, NGINX_ERROR_LINE } from '../../../lib/formats/nginx-error.js'
import { acceptsSyslogLine, SYSLOG_LINE } from '../../../lib/formats/syslog.js'
import { kindLines } from '../../helpers/corpus.js'

type Accepts = (bytes: Buffer, start: number, end: number) => boolean

const PASSES: readonly { kind: LogKind; accepts: Accepts; pattern: RegExp }[] = [
  { kind: 'syslog', accepts: acceptsSyslogLine, pattern: SYSLOG_LINE },
  { kind: 'dns-dnsmasq', accepts: acceptsDnsmasqLine, pattern: DNSMASQ_LINE },
  { kind: 'nginx-error', accepts: acceptsNginxErrorLine, pattern: NGINX_ERROR_LINE }
]

/** `accepts` of `line` between other lines' bytes, as a read chunk holds it: a pass must not read past its end. */
function acceptsInChunk(accepts: Accepts, line: Buffer): boolean {
  const bytes = Buffer.concat([Buffer.from('Jan  1 '), line, Buffer.from(' \n: [1]: x')])
  return accepts(bytes, 7, 7 + line.length)
}

/** Bytes a mutation puts in a line: the formats' separators, digits, letters, line terminators, non-ASCII, bad UTF-8. */
const PIECES: readonly Buffer[] = [
  ' ',
  ':',
  '[',
  ']',
  '(',
  ')',
  '#',
  '*',
  '/',
  '-',
  '0',
  '7',
  'a',
  'Q',
  '\t',
  '\r',
  '\n',
  '\u2028',
  '\u2029',
  '\u2026',
  '\u00a0',
  'é',
  'dhcp',
  'error] ',
  ': '
]
  .map((s) => Buffer.from(s))
  .concat([Buffer.from([0xff]), Buffer.from([0xe2, 0x80]), Buffer.from([0x00])])

/** A line with up to three pieces inserted, replacing a byte or removed. */
function mutated(lines: readonly string[]): fc.Arbitrary<Buffer> {
  const edit = fc.record({
    at: fc.nat(),
    op: fc.constantFrom('insert', 'replace', 'delete'),
    piece: fc.constantFrom(...PIECES)
  })
  return fc.tuple(fc.constantFrom(...lines), fc.array(edit, { maxLength: 3 })).map(([line, edits]) => {
    let bytes = Buffer.from(line)
    for (const { at, op, piece } of edits) {
      const i = at % (bytes.length + 1)
      const after = bytes.subarray(op === 'insert' ? i : Math.min(bytes.length, i + 1))
      bytes = Buffer.concat([bytes.subarray(0, i), op === 'delete' ? Buffer.alloc(0) : piece, after])
    }
    return bytes
  })
}

describe("the text formats' bytes passes take only lines their regex takes", () => {
  for (const { kind, accepts, pattern } of PASSES) {
    it(`${kind}: every corpus line the regex takes in its plain form is taken on its bytes`, () => {
      const lines = kindLines(kind)
      const taken = lines.filter((l) => pattern.test(l))
      assert.ok(taken.length > 0, `${kind}: the corpus has lines of the kind`)
      for (const line of lines)
        if (acceptsInChunk(accepts, Buffer.from(line))) assert.ok(pattern.test(line), JSON.stringify(line))
      // The plain form: ASCII, and for syslog a tag without a parenthesised part holding a space.
      const plain = taken.filter((l) => /^[\x20-\x7e]*$/.test(l) && !/\([^)]* [^)]*\)/.test(l))
      const missed = plain.filter((l) => !acceptsInChunk(accepts, Buffer.from(l)))
      assert.deepEqual(missed, [], `${kind}: plain lines left to the regex`)
    })

    it(`${kind}: a line taken on its bytes matches the regex, for corpus lines with bytes inserted, replaced or removed`, () => {
      const lines = kindLines(kind).filter((l) => pattern.test(l))
      let taken = 0
      let left = 0
      fc.assert(
        fc.property(mutated(lines), (bytes) => {
          if (acceptsInChunk(accepts, bytes)) {
            taken++
            assert.ok(pattern.test(bytes.toString('utf8')), JSON.stringify(bytes.toString('utf8')))
          } else left++
        }),
        { numRuns: 5000, seed: 35 }
      )
      assert.ok(taken > 500 && left > 500, `${kind}: ${taken} taken, ${left} left to the regex`)
    })
  }
})
