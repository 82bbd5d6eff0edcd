import { parseCombinedLine, type HttpRequestFields } from '../../lib/formats/index.js'
import { kindLines } from './corpus.js'

/**
 * Produced by the reference compiler (capnp 0.9/1.0 tool, not needed to run this test):
 *   capnp encode lib/formats/http-request.capnp HttpRequest < text
 * with every field set. Decoding it proves the hand-written offsets match the compiler's layout;
 * re-encoding it byte-for-byte proves the writer lays out data and pointers the same way too.
 */
export const CAPNP_TOOL_MESSAGE =
  '000000002e0000000000000006000e001523cbf072fade1322c803000200f7010500000001000000ffffffffffffffff070004000000484100005040ffffffff350000006200000039000000820000003d00000072000000410000004a000000450000003a000000450000005a00000049000000aa000000510000008a0000005900000022000000590000003200000059000000aa000000610000001a0000006100000032000000610000001a000000323030313a6462383a3a31000000000063646e2e6578616d706c652e636f6d002f6170692f76312f6974656d73000000613d3126623dc3bc0000000000000000485454502f3200006375726c2f382e352e3000000000000068747470733a2f2f6578616d706c652e636f6d2f000000006170706c69636174696f6e2f6a736f6e000000000000000046524100000000007265712d31000000386131623263336434653566366137622d4652410000000044450000000000006672616e6b0000006964000000000000'

export const CAPNP_TOOL_FIELDS: HttpRequestFields = {
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

/** Every corpus access line the combined-log parser accepts (9,999 of 10,000), with its fields. */
export function parsedAccessLines(): Array<{ line: string; fields: HttpRequestFields }> {
  const parsed: Array<{ line: string; fields: HttpRequestFields }> = []
  for (const line of kindLines('http')) {
    try {
      parsed.push({ line, fields: parseCombinedLine(line) })
    } catch {
      // The corpus has one line that is not combined format.
    }
  }
  return parsed
}
