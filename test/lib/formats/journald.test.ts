import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { journaldFormat } from '../../../lib/formats/journald.js'
import { kindLines } from '../../helpers/corpus.js'

function jsonParseGivesObject(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
  } catch {
    return false
  }
}

function accepted(line: string): boolean {
  try {
    journaldFormat.encodeLine(line)
    return true
  } catch {
    return false
  }
}

// Pieces JSON is made of, so random splices often land near the edge between valid and invalid.
const jsonish = fc.string({
  unit: fc.constantFrom(
    '{',
    '}',
    '[',
    ']',
    '"',
    ':',
    ',',
    ' ',
    '\t',
    '\\',
    'u',
    '0',
    '1',
    '-',
    '.',
    'e',
    '+',
    'a',
    'n',
    'true',
    'null',
    '\u0001',
    '\ud800',
    '\u2028'
  ),
  maxLength: 40
})
const flatObject = fc
  .dictionary(
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null)),
    { maxKeys: 6 }
  )
  .map((o) => JSON.stringify(o))
/** A valid line with a piece of JSON syntax put in, taken out or swapped at some place. */
const mutated = fc
  .tuple(
    fc.oneof(flatObject, fc.constantFrom(...kindLines('journald').slice(0, 50))),
    fc.nat(),
    fc.nat({ max: 3 }),
    jsonish
  )
  .map(([line, at, cut, piece]) => {
    const i = at % (line.length + 1)
    return line.slice(0, i) + piece + line.slice(i + cut)
  })

describe('journald lines: accepted exactly when JSON.parse makes an object of them', () => {
  it('every corpus line is accepted', () => {
    for (const line of kindLines('journald')) assert.ok(accepted(line), line)
  })

  it('fuzzed flat objects, mutated lines, JSON of any shape and JSON-ish noise', () => {
    fc.assert(
      fc.property(fc.oneof(flatObject, mutated, fc.json(), jsonish), (line) => {
        assert.equal(accepted(line), jsonParseGivesObject(line), JSON.stringify(line))
      }),
      { numRuns: 5000 }
    )
  })
})
