import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { parseCombinedTime } from '../../../lib/formats/combined-log.js'
import { readHttpRequestViaCapnpTs } from '../../../lib/formats/http-request.js'
import { formatFor, parseCombinedLine, readHttpRequest, writeHttpRequest } from '../../../lib/formats/index.js'
import type { HttpRequestFields } from '../../../lib/formats/index.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { kindLines } from '../../helpers/corpus.js'

/**
 * Produced by the reference compiler (capnp 0.9/1.0 tool, not needed to run this test):
 *   capnp encode lib/formats/http-request.capnp HttpRequest < text
 * with every field set. Decoding it proves the hand-written offsets match the compiler's layout;
 * re-encoding it byte-for-byte proves the writer lays out data and pointers the same way too.
 */
const CAPNP_TOOL_MESSAGE = '000000002e0000000000000006000e001523cbf072fade1322c803000200f7010500000001000000ffffffffffffffff070004000000484100005040ffffffff350000006200000039000000820000003d00000072000000410000004a000000450000003a000000450000005a00000049000000aa000000510000008a0000005900000022000000590000003200000059000000aa000000610000001a0000006100000032000000610000001a000000323030313a6462383a3a31000000000063646e2e6578616d706c652e636f6d002f6170692f76312f6974656d73000000613d3126623dc3bc0000000000000000485454502f3200006375726c2f382e352e3000000000000068747470733a2f2f6578616d706c652e636f6d2f000000006170706c69636174696f6e2f6a736f6e000000000000000046524100000000007265712d31000000386131623263336434653566366137622d4652410000000044450000000000006672616e6b0000006964000000000000'

const CAPNP_TOOL_FIELDS: HttpRequestFields = {
  timestampNs: 1431857103123456789n,
  clientIp: '2001:db8::1',
  clientPort: 51234,
  method: 'POST',
  scheme: 'https',
  host: 'cdn.example.com',
  path: '/api/v1/items',
  query: 'a=1&b=ü',
  protocol: 'HTTP/2',
  status: 503,
  requestBytes: 4294967301n,
  responseBytes: 18446744073709551615n,
  userAgent: 'curl/8.5.0',
  referer: 'https://example.com/',
  contentType: 'application/json',
  cacheStatus: 'revalidated',
  tlsVersion: 'TLSv1.3',
  originResponseTimeMs: 12.5,
  edgeTimeToFirstByteMs: 3.25,
  edgeLocation: 'FRA',
  requestId: 'req-1',
  rayId: '8a1b2c3d4e5f6a7b-FRA',
  country: 'DE',
  asn: 4294967295,
  remoteUser: 'frank',
  ident: 'id'
}

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

  it('applies the zone offset and maps "-" bytes to 0 and splits the query', () => {
    assert.equal(parseCombinedTime('17/May/2015:12:05:03 +0200'), BigInt(Date.UTC(2015, 4, 17, 10, 5, 3)) * 1_000_000n)
    const f = parseCombinedLine('1.2.3.4 - bob [01/Jan/2020:00:00:00 -0130] "PROPFIND /a/b?x=1&y=2 HTTP/1.0" 404 - "-" "-"')
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
      assert.throws(() => parseCombinedLine(line), (e: unknown) => e instanceof SqueezeError && e.code === ErrorCodes.PARSE_LINE)
    }
  })

  it('round-trips every accepted corpus line, and both readers agree', () => {
    let n = 0
    for (const line of kindLines('http')) {
      let fields: HttpRequestFields
      try {
        fields = parseCombinedLine(line)
      } catch {
        continue
      }
      const value = formatFor('http').encodeLine(line)
      assert.deepEqual(readHttpRequest(value), fields)
      assert.deepEqual(readHttpRequestViaCapnpTs(value), fields)
      n++
    }
    assert.equal(n, 9999)
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
