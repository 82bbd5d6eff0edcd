import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { parseCombinedTime } from '../../../lib/formats/combined-log.js'
import { readHttpRequestViaCapnpTs } from '../../../lib/formats/http-request.js'
import { formatFor, parseCombinedLine, readHttpRequest, writeHttpRequest } from '../../../lib/formats/index.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { kindLines } from '../../helpers/corpus.js'
import { CAPNP_TOOL_FIELDS, CAPNP_TOOL_MESSAGE, parsedAccessLines } from '../../helpers/http-golden.js'

describe('HttpRequest layout matches the capnp compiler', () => {
  const golden = Buffer.from(CAPNP_TOOL_MESSAGE, 'hex')

  it('fast reader decodes a capnp-tool message', () => {
    assert.deepEqual(readHttpRequest(golden), CAPNP_TOOL_FIELDS)
  })

  it('capnp-ts accessor decodes a capnp-tool message', () => {
    assert.deepEqual(readHttpRequestViaCapnpTs(golden), CAPNP_TOOL_FIELDS)
  })

  it('writer output is byte-identical to the capnp tool', () => {
    assert.equal(writeHttpRequest(CAPNP_TOOL_FIELDS).toString('hex'), CAPNP_TOOL_MESSAGE)
  })
})

describe('combined log line -> HttpRequest -> fields', () => {
  it('parses the first corpus line', () => {
    const f = parseCombinedLine(kindLines('http')[0] as string)
    assert.equal(f.clientIp, '83.149.9.216')
    assert.equal(f.timestampNs, BigInt(Date.UTC(2015, 4, 17, 10, 5, 3)) * 1_000_000n)
    assert.equal(f.method, 'GET')
    assert.equal(f.path, '/presentations/logstash-monitorama-2013/images/kibana-search.png')
    assert.equal(f.protocol, 'HTTP/1.1')
    assert.equal(f.status, 200)
    assert.equal(f.responseBytes, 203023n)
    assert.equal(f.referer, 'http://semicomplete.com/presentations/logstash-monitorama-2013/')
  })

  it("reads sizes of any length exactly, and each line's own time when consecutive lines share a second or do not", () => {
    const line = (time: string, bytes: string): string => `1.2.3.4 - - [${time}] "GET / HTTP/1.1" 200 ${bytes} "-" "-"`
    for (const bytes of [
      '0',
      '007',
      '999999999999999',
      '1000000000000000',
      '9007199254740993',
      '18446744073709551615'
    ]) {
      assert.equal(parseCombinedLine(line('17/May/2015:10:05:03 +0000', bytes)).responseBytes, BigInt(bytes), bytes)
    }
    const times = [
      '17/May/2015:10:05:03 +0000',
      '17/May/2015:10:05:03 +0000',
      '17/May/2015:10:05:04 +0000',
      '17/May/2015:10:05:03 +0100',
      '18/May/2015:10:05:03 +0000',
      '17/May/2015:10:05:03 +0000'
    ]
    const expected = [
      Date.UTC(2015, 4, 17, 10, 5, 3),
      Date.UTC(2015, 4, 17, 10, 5, 3),
      Date.UTC(2015, 4, 17, 10, 5, 4),
      Date.UTC(2015, 4, 17, 9, 5, 3),
      Date.UTC(2015, 4, 18, 10, 5, 3),
      Date.UTC(2015, 4, 17, 10, 5, 3)
    ]
    times.forEach((time, i) =>
      assert.equal(parseCombinedLine(line(time, '1')).timestampNs, BigInt(expected[i] as number) * 1_000_000n, time)
    )
  })

  it('applies the zone offset and maps "-" bytes to 0 and splits the query', () => {
    assert.equal(parseCombinedTime('17/May/2015:12:05:03 +0200'), BigInt(Date.UTC(2015, 4, 17, 10, 5, 3)) * 1_000_000n)
    const f = parseCombinedLine(
      '1.2.3.4 - bob [01/Jan/2020:00:00:00 -0130] "PROPFIND /a/b?x=1&y=2 HTTP/1.0" 404 - "-" "-"'
    )
    assert.equal(f.timestampNs, BigInt(Date.UTC(2020, 0, 1, 1, 30)) * 1_000_000n)
    assert.equal(f.responseBytes, 0n)
    assert.equal(f.path, '/a/b')
    assert.equal(f.query, 'x=1&y=2')
    assert.equal(f.method, 'OTHER')
    assert.equal(f.remoteUser, 'bob')
    assert.equal(f.referer, '')
  })

  it('rejects bad timestamps and request lines with PARSE_LINE', () => {
    for (const line of [
      '1.2.3.4 - - [01/Foo/2020:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"',
      '1.2.3.4 - - [01/Jan/2020:00:00:00 +0000] "\\x16\\x03" 400 1 "-" "-"',
      ''
    ]) {
      assert.throws(
        () => parseCombinedLine(line),
        (e: unknown) => e instanceof SqueezeError && e.code === ErrorCodes.PARSE_LINE
      )
    }
  })

  it('round-trips every accepted corpus line, and both readers agree', () => {
    const parsed = parsedAccessLines()
    for (const { line, fields } of parsed) {
      const value = formatFor('http').encodeLine(line)
      assert.deepEqual(readHttpRequest(value), fields)
      assert.deepEqual(readHttpRequestViaCapnpTs(value), fields)
    }
    assert.equal(parsed.length, 9999)
  })

  it('fast reader agrees with capnp-ts on 5000 generated records (all fields populated)', () => {
    const gen = createGenerator('http', { seed: 99 })
    for (let i = 0; i < 5000; i++) {
      const { value } = gen.next()
      assert.deepEqual(readHttpRequest(value), readHttpRequestViaCapnpTs(value))
    }
  })

  it('reads records from an older, smaller struct as defaults for the missing fields', () => {
    // Shrink the root struct pointer to 2 data words and no pointers, as an older schema (fewer
    // fields) would have written it; the bytes after the struct are simply unreferenced.
    const small = Buffer.from(writeHttpRequest(CAPNP_TOOL_FIELDS))
    small.writeUInt16LE(2, 8 + 4)
    small.writeUInt16LE(0, 8 + 6)
    const f = readHttpRequest(small)
    assert.equal(f.timestampNs, CAPNP_TOOL_FIELDS.timestampNs)
    assert.equal(f.status, 503)
    assert.equal(f.responseBytes, 0n)
    assert.equal(f.userAgent, '')
  })
})
