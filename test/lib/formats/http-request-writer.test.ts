import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  HttpRequestWriter,
  maxHttpRequestBytes,
  writeHttpRequest,
  writeHttpRequestAt
} from '../../../lib/formats/http-request-writer.js'
import {
  CACHE_STATUSES,
  HTTP_METHODS,
  SCHEMES,
  TLS_VERSIONS,
  writeHttpRequestViaCapnpTs,
  type HttpRequestFields
} from '../../../lib/formats/http-request.js'
import { readHttpRequest } from '../../../lib/formats/index.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { NON_IDEMPOTENT, RecordBatchBuilder, stampProducerState } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'
import { createCodec } from '../../../lib/codecs/index.js'
import { CAPNP_TOOL_FIELDS, CAPNP_TOOL_MESSAGE, parsedAccessLines } from '../../helpers/http-golden.js'

function assertSameBytes(actual: Buffer, fields: HttpRequestFields): void {
  const expected = writeHttpRequestViaCapnpTs(fields)
  if (!actual.equals(expected))
    assert.fail(
      `writer differs from capnp-ts for ${JSON.stringify(fields, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}\n  got      ${actual.toString('hex')}\n  capnp-ts ${expected.toString('hex')}`
    )
}

const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }) },
  // Lone surrogates included: both writers must turn them into U+FFFD the same way.
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 40, maxLength: 600 }) }
)
const enumOf = (names: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) })

const fieldsArbitrary = fc.record({
  timestampNs: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  clientIp: text,
  clientPort: fc.integer({ min: 0, max: 0xffff }),
  method: enumOf(HTTP_METHODS),
  scheme: enumOf(SCHEMES),
  host: text,
  path: text,
  query: text,
  protocol: text,
  status: fc.integer({ min: 0, max: 0xffff }),
  requestBytes: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  responseBytes: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  userAgent: text,
  referer: text,
  contentType: text,
  cacheStatus: enumOf(CACHE_STATUSES),
  tlsVersion: enumOf(TLS_VERSIONS),
  originResponseTimeMs: fc.float(),
  edgeTimeToFirstByteMs: fc.float(),
  edgeLocation: text,
  requestId: text,
  rayId: text,
  country: text,
  asn: fc.integer({ min: 0, max: 0xffffffff }),
  remoteUser: text,
  ident: text
}) as fc.Arbitrary<HttpRequestFields>

describe('HttpRequestWriter: byte-identical to capnp-ts', () => {
  it("writes the capnp tool's golden message, as the capnp-ts reference writer does", () => {
    assert.equal(writeHttpRequest(CAPNP_TOOL_FIELDS).toString('hex'), CAPNP_TOOL_MESSAGE)
    assert.equal(writeHttpRequestViaCapnpTs(CAPNP_TOOL_FIELDS).toString('hex'), CAPNP_TOOL_MESSAGE)
  })

  it('every parsed corpus access line', () => {
    const parsed = parsedAccessLines()
    for (const { fields } of parsed) assertSameBytes(writeHttpRequest(fields), fields)
    assert.equal(parsed.length, 9999)
  })

  it('generated records, every field set', () => {
    const gen = createGenerator('http', { seed: 7 })
    for (let i = 0; i < 2000; i++) {
      const { value } = gen.next()
      assertSameBytes(value, readHttpRequest(value))
    }
  })

  it('fuzzed records: any text (non-ASCII, lone surrogates, long), any scalar, unknown enum names, across slab ends', () => {
    // A slab smaller than some records: they get a slab of their own, the next record a fresh one.
    const writer = new HttpRequestWriter(1024)
    fc.assert(
      fc.property(fieldsArbitrary, (fields) => assertSameBytes(writer.write(fields), fields)),
      { numRuns: 3000 }
    )
  })

  it('a record stays unchanged while later ones are written', () => {
    const writer = new HttpRequestWriter(4096)
    const gen = createGenerator('http', { seed: 8 })
    const fields = Array.from({ length: 500 }, () => readHttpRequest(gen.next().value))
    const written = fields.map((f) => writer.write(f))
    written.forEach((value, i) => assertSameBytes(value, fields[i] as HttpRequestFields))
  })
})

describe('HttpRequest records written straight into a batch (RecordBatchBuilder.tryAppendWritten)', () => {
  /** A builder over memory that is never zeroed by its allocator, as the producer's recycled batch buffers are not. */
  function dirtyBuilder(capacity: number, initialBytes = capacity): RecordBatchBuilder {
    return new RecordBatchBuilder(capacity, initialBytes, (size) => Buffer.alloc(size, 0xa5))
  }

  /** The records' values read back from the builder's sealed batch. */
  function valuesOf(builder: RecordBatchBuilder): Buffer[] {
    const sealed = builder.seal(createCodec({ codec: 'none', level: null })).bytes
    stampProducerState(sealed, NON_IDEMPOTENT)
    return readBatch(sealed).records.map((r) => r.value as Buffer)
  }

  it('every parsed corpus access line: the capnp-ts bytes, in a buffer that grows from 4 KiB', () => {
    const parsed = parsedAccessLines()
    const builder = dirtyBuilder(64 * 1024 * 1024, 4096)
    for (const { fields } of parsed)
      assert.ok(builder.tryAppendWritten(maxHttpRequestBytes(fields), 1, writeHttpRequestAt, fields))
    const values = valuesOf(builder)
    assert.equal(values.length, parsed.length)
    values.forEach((value, i) => assertSameBytes(value, (parsed[i] as { fields: HttpRequestFields }).fields))
  })

  it('fuzzed records, batch after batch of 64 KiB: the capnp-ts bytes, whatever the buffer held before', () => {
    let builder = dirtyBuilder(64 * 1024)
    let written: HttpRequestFields[] = []
    const check = (): void => {
      valuesOf(builder).forEach((value, i) => assertSameBytes(value, written[i] as HttpRequestFields))
      builder = dirtyBuilder(64 * 1024)
      written = []
    }
    fc.assert(
      fc.property(fieldsArbitrary, (fields) => {
        if (!builder.tryAppendWritten(maxHttpRequestBytes(fields), 1, writeHttpRequestAt, fields)) {
          check()
          assert.ok(builder.tryAppendWritten(maxHttpRequestBytes(fields), 1, writeHttpRequestAt, fields))
        }
        written.push(fields)
      }),
      { numRuns: 3000 }
    )
    check()
  })
})
