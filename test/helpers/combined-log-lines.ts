import fc from 'fast-check'
import { HTTP_METHODS } from '../../lib/formats/http-request.js'

/**
 * Combined-log lines for the tests that hold a faster reader of the format to parseCombinedLine: real lines edited
 * at the grammar's edges, and lines generated field by field, inside and outside the format.
 */

/** Bytes that move a combined-log line across the grammar's edges. */
export const EDGE_CHARS = [
  ' ',
  '  ',
  '\t',
  '\r',
  '"',
  '[',
  ']',
  '-',
  '?',
  '0',
  '9',
  'A',
  'z',
  '/',
  '.',
  'é',
  '\u00a0',
  '\u2028',
  '\ufffd',
  'HTTP/1.1',
  '\0'
]

/** Lines of `corpus` with one to three edits: a few characters cut, an edge character or a short string put in. */
export function mutatedLine(corpus: readonly string[]): fc.Arbitrary<string> {
  return fc
    .record({
      line: fc.constantFrom(...corpus),
      edits: fc.array(
        fc.record({
          at: fc.nat(),
          cut: fc.nat({ max: 3 }),
          put: fc.oneof(fc.constantFrom(...EDGE_CHARS), fc.string({ maxLength: 3 }))
        }),
        { minLength: 1, maxLength: 3 }
      )
    })
    .map(({ line, edits }) =>
      edits.reduce((l, { at, cut, put }) => {
        const i = at % (l.length + 1)
        return l.slice(0, i) + put + l.slice(i + cut)
      }, line)
    )
}

export const token = (chars: string, min = 1, max = 12): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...chars.split('')), minLength: min, maxLength: max })

/** The fields of a combined-log line, each a string that goes between the format's separators as it is. */
export interface CombinedParts {
  readonly ip: string
  readonly ident: string
  readonly user: string
  readonly time: string
  readonly method: string
  readonly target: string
  readonly protocol: string
  readonly status: string
  readonly size: string
  readonly referer: string
  readonly agent: string
}

export function combinedLine(p: CombinedParts): string {
  return `${p.ip} ${p.ident} ${p.user} [${p.time}] "${p.method} ${p.target} ${p.protocol}" ${p.status} ${p.size} "${p.referer}" "${p.agent}"`
}

/** Lines generated field by field, with `time` for the timestamps. */
export function generatedLineWith(time: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .record({
      ip: token('abc-.:019'),
      ident: token('-ab'),
      user: token('-xy'),
      time,
      method: fc.constantFrom(...HTTP_METHODS, 'get', 'PROPFIND', ''),
      target: token('/a?b=c&d%20', 0),
      protocol: fc.constantFrom('HTTP/1.1', 'HTTP/2.0', 'HTTP/1', 'HTTPS/1.1'),
      status: fc.integer({ min: 0, max: 999 }).map((n) => String(n).padStart(3, '0')),
      size: fc.oneof(
        fc.constant('-'),
        fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String),
        fc.constant('0000000000000001')
      ),
      referer: token('-http://x/ ', 0),
      agent: token('Mozilla/5.0 (X11) -', 0)
    })
    .map(combinedLine)
}

export const generatedLine = generatedLineWith(
  fc.constantFrom(
    '17/May/2015:10:05:03 +0000',
    '17/May/2015:10:05:59 -0130',
    '31/Dec/1969:23:59:59 +0000',
    '01/Jan/2015:00:00:00 +2359',
    'bad time',
    '17/May/2015:10:05:3x +0000'
  )
)
