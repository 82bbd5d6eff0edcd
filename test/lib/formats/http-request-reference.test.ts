import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { formatFor } from '../../../lib/formats/index.js'
import { readHttpRequestViaCapnpTs } from '../../../lib/formats/http-request.js'

const LINE =
  '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08"'

function capnpTsLoaded(): boolean {
  return Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/capnp-ts/'))
}

describe('capnp-ts reference', () => {
  it('is loaded only when the reference reader or writer runs, not by encoding and decoding records', () => {
    const http = formatFor('http')
    const value = http.encodeLine(LINE)
    assert.ok(http.decode(value) > 0)
    assert.equal(capnpTsLoaded(), false, 'capnp-ts loaded by the fast path')
    assert.equal(readHttpRequestViaCapnpTs(value).path, '/apache_pb.gif')
    assert.equal(capnpTsLoaded(), true)
  })
})
