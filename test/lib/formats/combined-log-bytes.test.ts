import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseCombinedLine, parseCombinedTime } from '../../../lib/formats/combined-log.js'
import {
  CombinedTimeOfBytes,
  scanCombinedLine,
  setNanosFromMillis,
  TIMESTAMP_SLOT,
  type TimeSpan
} from '../../../lib/formats/combined-log-bytes.js'
import {
  HTTP_METHODS,
  HTTP_REQUEST_SCHEMA,
  writeHttpRequestViaCapnpTs,
  type HttpRequestFields
} from '../../../lib/formats/http-request.js'
import {
  emptyHttpRequestSpans,
  maxHttpRequestSpansBytes,
  setU64,
  setU64FromBigInt,
  u64Slot,
  writeHttpRequestSpansAt,
  type HttpRequestSpans
} from '../../../lib/formats/http-request-writer.js'
import { formatFor } from '../../../lib/formats/index.js'
import type { WrittenValueSink } from '../../../lib/formats/log-format.js'
import type { ValueWriter } from '../../../lib/protocol/record-batch-builder.js'
import { generatedLine, mutatedLine as mutatedLineOf } from '../../helpers/combined-log-lines.js'
import { kindLines } from '../../helpers/corpus.js'

/** The record the spans describe, written into dirty memory (as the batch builder's recycled buffers are) at an odd offset. */
function writeSpans(spans: HttpRequestSpans): Buffer {
  const max = maxHttpRequestSpansBytes(spans)
  const buf = Buffer.alloc(13 + max + 16, 0xa5)
  const end = writeHttpRequestSpansAt(buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 13, spans)
  assert.ok(end - 13 <= max, 'wrote past its bound')
  return buf.subarray(13, end)
}

/** What the text parser makes of `line`: the capnp-ts reference bytes, or the reason it throws. */
function viaText(line: string): { bytes: Buffer } | { error: string } {
  try {
    return { bytes: writeHttpRequestViaCapnpTs(parseCombinedLine(line)) }
  } catch (err) {
    return { error: (err as Error).message }
  }
}

/**
 * What the byte scanner makes of `line`: the record's bytes, or the reason its timestamp does not parse (the one
 * part it leaves to parseCombinedTime), or null where it leaves the whole line to the text parser.
 */
function viaBytes(line: string, times = new CombinedTimeOfBytes()): { bytes: Buffer } | { error: string } | null {
  const src = Buffer.from(line, 'utf8')
  const spans = emptyHttpRequestSpans()
  const time: TimeSpan = { start: 0, end: 0 }
  if (!scanCombinedLine(src, 0, src.length, spans, time)) return null
  try {
    times.set(src, time.start, time.end, spans.u64, TIMESTAMP_SLOT)
  } catch (err) {
    return { error: (err as Error).message }
  }
  return { bytes: writeSpans(spans) }
}

/** Lines the scanner must take: the text parser accepts them, they are ASCII, and the size fits a Number exactly. */
function scannable(line: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (!/^[\x00-\x7f]*$/.test(line) || 'error' in viaText(line)) return false
  const size = / (\d+) "[^"]*" "[^"]*"$/.exec(line)
  return size === null || (size[1] as string).length <= 15
}

/** Whether the scanner took `line`; fails unless it and the text parser agree, to the byte or to the error. */
function assertAgrees(line: string, times?: CombinedTimeOfBytes): boolean {
  const text = viaText(line)
  const scanned = viaBytes(line, times)
  if (scanned === null) {
    assert.ok(!scannable(line), `the scanner left a line it should take: ${JSON.stringify(line)}`)
    return false
  }
  if ('error' in scanned) {
    assert.deepEqual(text, scanned, JSON.stringify(line))
    return true
  }
  assert.ok(
    'bytes' in text,
    `the scanner took a line the text parser refuses (${'error' in text ? text.error : ''}): ${JSON.stringify(line)}`
  )
  if (!scanned.bytes.equals(text.bytes))
    assert.fail(
      `bytes differ for ${JSON.stringify(line)}\n  scanned  ${scanned.bytes.toString('hex')}\n  capnp-ts ${text.bytes.toString('hex')}`
    )
  return true
}

const CORPUS = kindLines('http')

const mutatedLine = mutatedLineOf(CORPUS)

describe('scanCombinedLine: the combined-log parser over bytes, the same records', () => {
  it("every corpus access line: the capnp-ts bytes of the text parser's fields, and every line it can take taken", () => {
    const times = new CombinedTimeOfBytes()
    const taken = CORPUS.filter((line) => assertAgrees(line, times)).length
    // One corpus line is not combined format; every other is plain ASCII.
    assert.equal(taken, CORPUS.length - 1)
  })

  it("fuzzed lines (corpus lines edited at the grammar's edges, and generated ones): taken only where the text parser agrees, to the byte", () => {
    let taken = 0
    let left = 0
    fc.assert(
      fc.property(fc.oneof(mutatedLine, generatedLine), (line) => {
        if (assertAgrees(line)) taken++
        else left++
      }),
      { numRuns: 6000 }
    )
    // Both sides of the edge were exercised.
    assert.ok(taken > 500 && left > 500, `taken ${taken}, left ${left}`)
  })

  it('httpFormat.writeLineBytes: the record writeLine makes, or the error it throws, for every corpus line and edited ones', () => {
    const format = formatFor('http')
    const put = (into: Buffer[]): WrittenValueSink => ({
      put<T>(max: number, write: ValueWriter<T>, arg: T): undefined {
        const buf = Buffer.alloc(max)
        into.push(buf.subarray(0, write(buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 0, arg)))
        return undefined
      }
    })
    const outcome = (run: (sink: WrittenValueSink) => unknown): string => {
      const into: Buffer[] = []
      try {
        run(put(into))
      } catch (err) {
        return `error: ${(err as Error).message}`
      }
      return (into[0] as Buffer).toString('hex')
    }
    const lines = [
      ...CORPUS,
      ...fc.sample(mutatedLine, { numRuns: 2000, seed: 11 }),
      'caf\u00e9 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 1 "-" "-"',
      ''
    ]
    for (const line of lines) {
      const bytes = Buffer.concat([Buffer.from('xx\n'), Buffer.from(line), Buffer.from('\nyy')])
      const expected = outcome((sink) => format.writeLine?.(line, sink))
      assert.equal(
        outcome((sink) => format.writeLineBytes?.(bytes, 3, bytes.length - 3, sink)),
        expected,
        JSON.stringify(line)
      )
    }
  })
})

describe('writeHttpRequestSpansAt: the capnp-ts bytes for a record given as byte ranges', () => {
  const TEXT_FIELDS = HTTP_REQUEST_SCHEMA.filter((field) => field.kind === 'text')
  const asciiText = fc.oneof(
    fc.string({ unit: 'grapheme-ascii', maxLength: 60 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 40, maxLength: 300 })
  )
  const u64 = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.maxSafeNat())

  it('any ASCII texts in any slot, any numbers (u64 halves set from a bigint or a safe integer)', () => {
    fc.assert(
      fc.property(
        fc.array(asciiText, { minLength: TEXT_FIELDS.length, maxLength: TEXT_FIELDS.length }),
        u64,
        u64,
        u64,
        fc.nat({ max: 0xffff }),
        fc.nat({ max: HTTP_METHODS.length - 1 }),
        fc.float(),
        (texts, timestamp, requestBytes, responseBytes, status, method, originMs) => {
          // The texts laid out one after another in one source buffer, as a line's fields are.
          const src = Buffer.from(`<${texts.join('|')}>`, 'latin1')
          const spans = emptyHttpRequestSpans()
          spans.src = src
          const fields: Record<string, unknown> = {}
          let at = 1
          TEXT_FIELDS.forEach((field, i) => {
            const t = texts[i] as string
            spans.text[field.at * 2] = at
            spans.text[field.at * 2 + 1] = at + t.length
            fields[field.name] = t
            at += t.length + 1
          })
          Object.assign(spans.values, { status, method, originResponseTimeMs: originMs })
          const u64 = [
            ['timestampNs', timestamp],
            ['requestBytes', requestBytes],
            ['responseBytes', responseBytes]
          ] as const
          for (const [name, value] of u64) {
            if (typeof value === 'bigint') setU64FromBigInt(spans.u64, u64Slot(name), value)
            else setU64(spans.u64, u64Slot(name), value)
          }
          Object.assign(fields, {
            timestampNs: BigInt(timestamp),
            clientPort: 0,
            method: HTTP_METHODS[method],
            scheme: 'unknown',
            status,
            requestBytes: BigInt(requestBytes),
            responseBytes: BigInt(responseBytes),
            cacheStatus: 'unknown',
            tlsVersion: 'none',
            originResponseTimeMs: originMs,
            edgeTimeToFirstByteMs: 0,
            asn: 0
          })
          const expected = writeHttpRequestViaCapnpTs(fields as unknown as HttpRequestFields)
          const actual = writeSpans(spans)
          if (!actual.equals(expected))
            assert.fail(`differs\n  spans    ${actual.toString('hex')}\n  capnp-ts ${expected.toString('hex')}`)
        }
      ),
      { numRuns: 2000 }
    )
  })
})

/** The u64 CombinedTimeOfBytes puts into a record's halves for the timestamp `src[start, end)`. */
function nanosOf(times: CombinedTimeOfBytes, src: Buffer, start: number, end: number): bigint {
  const u64 = new Uint32Array(2)
  times.set(src, start, end, u64, 0)
  return BigInt(u64[0] as number) | (BigInt(u64[1] as number) << 32n)
}

describe("CombinedTimeOfBytes: parseCombinedTime's nanoseconds without a string or a bigint per line", () => {
  it('setNanosFromMillis: the low 64 bits of ms * 1e6, exactly, for any ms from 0 to 2^53', () => {
    const u64 = new Uint32Array(2)
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeNat(), fc.integer({ min: 1_000_000_000_000, max: 4_000_000_000_000 })), (ms) => {
        setNanosFromMillis(u64, 0, ms)
        assert.equal(
          BigInt(u64[0] as number) | (BigInt(u64[1] as number) << 32n),
          BigInt.asUintN(64, BigInt(ms) * 1_000_000n),
          String(ms)
        )
      }),
      { numRuns: 5000 }
    )
  })

  it('the same second, the next second, the next minute, another zone, another day, seconds 60-99, and back', () => {
    const times = new CombinedTimeOfBytes()
    const stamps = [
      '17/May/2015:10:05:03 +0000',
      '17/May/2015:10:05:03 +0000',
      '17/May/2015:10:05:04 +0000',
      '17/May/2015:10:05:59 +0000',
      '17/May/2015:10:06:00 +0000',
      '17/May/2015:10:06:00 -0130',
      '17/May/2015:10:06:07 -0130',
      '18/May/2015:10:06:07 -0130',
      '18/May/2015:10:06:75 -0130',
      '17/May/2015:10:05:03 +0000',
      '31/Dec/1969:23:59:58 +0000',
      '31/Dec/1969:23:59:59 +0000'
    ]
    for (const stamp of stamps) {
      const src = Buffer.from(`[${stamp}]`)
      assert.equal(nanosOf(times, src, 1, src.length - 1), BigInt.asUintN(64, parseCombinedTime(stamp)), stamp)
    }
  })

  it('a bad timestamp throws what the text parser throws, and the next good one is still right', () => {
    const times = new CombinedTimeOfBytes()
    const good = Buffer.from('17/May/2015:10:05:03 +0000')
    nanosOf(times, good, 0, good.length)
    for (const bad of ['17/May/2015:10:05:0x +0000', '17/Mai/2015:10:05:03 +0000', '17/May/2015:10:05 +0000']) {
      const src = Buffer.from(bad)
      assert.throws(
        () => nanosOf(times, src, 0, src.length),
        (err: Error) => {
          assert.throws(() => parseCombinedTime(bad), { message: err.message })
          return true
        }
      )
    }
    const next = Buffer.from('17/May/2015:10:05:09 +0000')
    assert.equal(nanosOf(times, next, 0, next.length), parseCombinedTime('17/May/2015:10:05:09 +0000'))
  })
})
