import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { ErrorCodes } from '../../lib/errors.js'
import { checkHttpRequest, formatFor, LOG_KINDS, parseCombinedLine, readHttpRequest } from '../../lib/formats/index.js'
import { bytesInput, fuzz, FUZZ_RUNS, lineInput, printTallies, type FuzzTally } from './fuzz-harness.js'
import { encodedRecords, lineSeeds, realLines } from './fuzz-inputs.js'

const done: FuzzTally[] = []
after(() => printTallies('log formats', done))

/** Both outcomes were reached: the fuzzer neither only fed garbage nor only fed valid input. */
function assertExercised(t: FuzzTally): void {
  assert.equal(t.runs, FUZZ_RUNS)
  assert.ok(t.accepted > 0, `${t.target}: no input was accepted`)
  assert.ok(t.accepted < t.runs, `${t.target}: no input was rejected`)
  done.push(t)
}

describe('fuzz: log formats reject bad input only with their documented errors', () => {
  for (const kind of LOG_KINDS) {
    const format = formatFor(kind)
    it(`${kind} encodeLine: ${FUZZ_RUNS} mutated real lines; PARSE_LINE or a record that decode reads back`, () => {
      assertExercised(
        fuzz(
          `${kind} encodeLine`,
          lineInput(lineSeeds(kind)),
          (line) => format.encodeLine(line),
          [ErrorCodes.PARSE_LINE],
          (value) => {
            assert.ok(Buffer.isBuffer(value))
            const fields = format.decode(value)
            assert.ok(Number.isInteger(fields) && fields >= 0)
          }
        )
      )
    })

    it(`${kind} decode: ${FUZZ_RUNS} mutated real records and random bytes; DECODE_RECORD or a field count`, () => {
      assertExercised(
        fuzz(
          `${kind} decode`,
          bytesInput(encodedRecords(kind, 200)),
          (bytes) => format.decode(bytes),
          [ErrorCodes.DECODE_RECORD],
          (fields) => {
            assert.ok(Number.isInteger(fields) && fields >= 0)
          }
        )
      )
    })
  }

  it(`http: ${FUZZ_RUNS} mutated records; the zero-copy check and the full reader reject exactly the same ones`, () => {
    const outcome = (read: () => unknown): string => {
      try {
        read()
        return 'ok'
      } catch (err) {
        return (err as { code?: string }).code ?? 'thrown'
      }
    }
    assertExercised(
      fuzz(
        'http check vs read',
        bytesInput(encodedRecords('http', 200)),
        (bytes) => {
          const checked = outcome(() => checkHttpRequest(bytes))
          assert.equal(
            checked,
            outcome(() => readHttpRequest(bytes))
          )
          if (checked !== 'ok') checkHttpRequest(bytes)
          return checked
        },
        [ErrorCodes.DECODE_RECORD]
      )
    )
  })

  it(`combined-log parser: ${FUZZ_RUNS} mutated access-log lines; PARSE_LINE or well-formed fields`, () => {
    assertExercised(
      fuzz(
        'combined-log parseCombinedLine',
        lineInput(realLines('http', 400)),
        parseCombinedLine,
        [ErrorCodes.PARSE_LINE],
        (fields) => {
          assert.ok(Number.isInteger(fields.status) && fields.status >= 0 && fields.status <= 999)
          assert.ok(fields.responseBytes >= 0n)
          assert.equal(typeof fields.timestampNs, 'bigint')
        }
      )
    )
  })
})
