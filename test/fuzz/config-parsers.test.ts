import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import { parseProperties } from '../../lib/config/producer-properties.js'
import { MAX_BATCH_UNCOMPRESSED_BYTES, splitReadSettings } from '../../lib/config/read-properties.js'
import { parseJaasConfig, parseJavaProperties } from '../../lib/config/client-properties.js'
import { ErrorCodes } from '../../lib/errors.js'
import { fuzz, FUZZ_RUNS, FUZZ_SEED, lineInput, printTallies, type FuzzTally } from './fuzz-harness.js'

const done: FuzzTally[] = []
after(() => printTallies('config parsers', done))

const PROPERTIES_SEEDS = [
  'bootstrap.servers=127.0.0.1:9092',
  'security.protocol = SASL_SSL',
  'sasl.mechanism:SCRAM-SHA-512',
  '# a comment',
  '! another',
  'ssl.ca.location /etc/ssl/ca.pem',
  'key\\ with\\ spaces=value\\u0041\\tend',
  'multi=line\\',
  '  continued here',
  'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cr\\"et";'
]
const JAAS_SEEDS = [
  'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="secret";',
  'org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password="p\\"w\\\\d";',
  'com.example.Login optional;'
]

/** A property key or value with the characters the format escapes: separators, comment marks, backslashes, controls. */
const propertyText = fc.string({
  unit: fc.constantFrom('a', 'Z', '0', '.', '=', ':', ' ', '#', '!', '\\', '\t', '\n', 'é', '"'),
  maxLength: 24
})

function escapeProperty(text: string, isKey: boolean): string {
  let out = ''
  for (const [i, c] of [...text].entries()) {
    if (c === '\\' || c === '=' || c === ':' || c === '#' || c === '!') out += `\\${c}`
    else if (c === ' ' && (isKey || i === 0)) out += '\\ '
    else if (c === '\t') out += '\\t'
    else if (c === '\n') out += '\\n'
    else out += c
  }
  return out
}

describe('fuzz: the properties and JAAS parsers', () => {
  it(`Java properties: any of ${FUZZ_RUNS} texts parses to a map without throwing`, () => {
    const tally = fuzz(
      'parseJavaProperties',
      lineInput(PROPERTIES_SEEDS).map((t) => `${t}\n${t}`),
      (text) => parseJavaProperties(text),
      [],
      (props) => {
        for (const [k, v] of props) assert.ok(typeof k === 'string' && typeof v === 'string')
      }
    )
    assert.equal(tally.accepted, FUZZ_RUNS)
    done.push(tally)
  })

  it(`Java properties: ${FUZZ_RUNS} generated files written with escapes read back as written`, () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.tuple(
            propertyText.filter((k) => k !== ''),
            propertyText
          ),
          { selector: ([k]) => k, maxLength: 6 }
        ),
        (entries) => {
          const text = entries.map(([k, v]) => `${escapeProperty(k, true)}=${escapeProperty(v, false)}`).join('\n')
          assert.deepEqual([...parseJavaProperties(text)], entries)
        }
      ),
      { numRuns: FUZZ_RUNS, seed: FUZZ_SEED }
    )
  })

  it(`JAAS: any of ${FUZZ_RUNS} texts parses or throws a message that never quotes the text (it holds the password)`, () => {
    let accepted = 0
    let refused = 0
    fc.assert(
      fc.property(lineInput(JAAS_SEEDS), (text) => {
        try {
          parseJaasConfig(text)
          accepted++
        } catch (err) {
          assert.ok(err instanceof Error && !(err instanceof TypeError), String(err))
          assert.ok(!err.message.includes('secret') && !err.message.includes('alice'), err.message)
          refused++
        }
      }),
      { numRuns: FUZZ_RUNS, seed: FUZZ_SEED }
    )
    assert.ok(accepted > 0 && refused > 0)
  })

  it(`JAAS: ${FUZZ_RUNS} generated user names and passwords with quotes and backslashes read back exactly`, () => {
    const secret = fc.string({ unit: fc.constantFrom('a', 'Z', '9', ' ', '"', '\\', ';', '=', 'é'), maxLength: 20 })
    fc.assert(
      fc.property(secret, secret, (username, password) => {
        const quote = (s: string): string => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`
        const parsed = parseJaasConfig(
          `org.apache.kafka.common.security.scram.ScramLoginModule required username=${quote(username)} password=${quote(password)};`
        )
        assert.deepEqual(parsed, {
          module: 'org.apache.kafka.common.security.scram.ScramLoginModule',
          username,
          password
        })
      }),
      { numRuns: FUZZ_RUNS, seed: FUZZ_SEED }
    )
  })

  it(`-X settings: any of ${FUZZ_RUNS} values of ${MAX_BATCH_UNCOMPRESSED_BYTES} is a whole number in range or CONFIG_INVALID`, () => {
    const value = fc.oneof(
      fc.integer().map(String),
      fc.double().map(String),
      fc.string({ maxLength: 12 }),
      fc.constantFrom('65536', '1e9', '0x100000', '-1', ' 4096 ', '')
    )
    const tally = fuzz(
      '-X squeeze.max.batch.uncompressed.bytes',
      value,
      (v) => splitReadSettings(parseProperties([`${MAX_BATCH_UNCOMPRESSED_BYTES}=${v}`])),
      [ErrorCodes.CONFIG_INVALID],
      (parsed) => {
        const max = parsed.read.maxBatchUncompressedBytes
        assert.ok(max !== undefined && Number.isInteger(max) && max >= 64 * 1024 && max < 2 ** 31, String(max))
        assert.deepEqual(parsed.rest, {})
      }
    )
    assert.ok(tally.accepted > 0)
    done.push(tally)
  })
})
