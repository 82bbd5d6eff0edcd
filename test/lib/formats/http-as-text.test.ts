import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCombinedLine } from '../../../lib/formats/combined-log.js'
import { combinedLogLine, httpRequestJson } from '../../../lib/formats/http-as-text.js'
import { readHttpRequest } from '../../../lib/formats/http-request-reader.js'
import { createGenerator } from '../../../lib/generators/index.js'

const LINES = [
  '203.0.113.9 - - [17/May/2015:10:05:03 +0000] "GET /presentations/logstash-monitorama-2013/images/kibana-search.png HTTP/1.1" 200 203023 "http://semicomplete.com/presentations/logstash-monitorama-2013/" "Mozilla/5.0 (Macintosh)"',
  '10.0.0.1 ident frank [01/Jan/2024:00:00:59 +0000] "POST /api/v1/items?id=7&q=a%20b HTTP/2.0" 404 - "-" "curl/8.0"'
]

describe('HttpRequest records as text', () => {
  it('combinedLogLine writes back the line parseCombinedLine read (UTC times)', () => {
    for (const line of LINES) assert.equal(combinedLogLine(parseCombinedLine(line)), line)
  })

  it("a generated record's line parses back into the fields the combined format carries; its JSON holds every field", () => {
    const generator = createGenerator('http', { seed: 7 })
    for (let i = 0; i < 500; i++) {
      const fields = readHttpRequest(generator.next().value)
      const back = parseCombinedLine(combinedLogLine(fields))
      for (const name of [
        'clientIp',
        'ident',
        'remoteUser',
        'method',
        'path',
        'query',
        'protocol',
        'status',
        'responseBytes',
        'referer',
        'userAgent'
      ] as const) {
        assert.equal(back[name], fields[name], `record ${i}: ${name}`)
      }
      // The combined format's time has whole seconds.
      assert.equal(back.timestampNs, (fields.timestampNs / 1_000_000_000n) * 1_000_000_000n, `record ${i}: time`)
      const json = JSON.parse(httpRequestJson(fields)) as Record<string, unknown>
      assert.deepEqual(Object.keys(json), Object.keys(fields))
      assert.equal(json.userAgent, fields.userAgent)
      assert.equal(json.responseBytes, Number(fields.responseBytes))
    }
  })
})
