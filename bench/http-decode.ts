import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { readHttpRequestViaCapnpTs } from '../lib/formats/http-request.js'
import { formatFor, readHttpRequest } from '../lib/formats/index.js'
import { createGenerator } from '../lib/generators/index.js'

/**
 * Decode throughput, reading every field, for the same 10k logical records as (a) Cap'n Proto via
 * the fast reader into a plain object (every text field a JS string), (b) the zero-copy read the consumer
 * does (every field read, text located and checked, no strings built), (c) Cap'n Proto via capnp-ts,
 * (d) JSON.parse of the equivalent JSON object. The target compares (a) with (d): same logical output.
 * Run: npm run build && node dist/bench/http-decode.js [out.json]. Prints a table and writes JSON; ratios
 * matter more than absolute numbers on shared 2-core machines. A benchmark, not a test: no timing assertions.
 */
function recordsPerSecond<T>(items: readonly T[], fn: (item: T) => number): number {
  let best = 0
  for (let round = 0; round < 5; round++) {
    let sink = 0
    const t0 = process.hrtime.bigint()
    for (const item of items) sink += fn(item)
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    assert.ok(sink > 0)
    best = Math.max(best, items.length / seconds)
  }
  return Math.round(best)
}

function main(): void {
  const gen = createGenerator('http', { seed: 11 })
  const values = Array.from({ length: 10_000 }, () => gen.next().value)
  const json = values.map((v) =>
    JSON.stringify(readHttpRequest(v), (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))
  )
  const http = formatFor('http')
  const fast = recordsPerSecond(values, (v) => Object.keys(readHttpRequest(v)).length)
  const zeroCopy = recordsPerSecond(values, (v) => http.decode(v))
  const reference = recordsPerSecond(values, (v) => Object.keys(readHttpRequestViaCapnpTs(v)).length)
  const parsed = recordsPerSecond(json, (s) => {
    let n = 0
    for (const key in JSON.parse(s) as Record<string, unknown>) if (key.length > 0) n++
    return n
  })
  console.log('http decode, 10k records, every field read (records/s):')
  console.table({
    'capnp fast reader (plain object)': fast,
    'capnp zero-copy read (consumer decode)': zeroCopy,
    'capnp-ts reference': reference,
    'JSON.parse (same records)': parsed
  })
  const result = {
    records: values.length,
    recordsPerSecond: { fastReader: fast, zeroCopy, capnpTs: reference, jsonParse: parsed },
    ratios: { fastVsJsonParse: fast / parsed, zeroCopyVsJsonParse: zeroCopy / parsed, fastVsCapnpTs: fast / reference }
  }
  console.log(
    `fast reader / JSON.parse = ${result.ratios.fastVsJsonParse.toFixed(2)}x, zero-copy / JSON.parse = ${result.ratios.zeroCopyVsJsonParse.toFixed(2)}x, fast reader / capnp-ts = ${result.ratios.fastVsCapnpTs.toFixed(2)}x`
  )
  writeFileSync(process.argv[2] ?? 'bench-http-decode.json', JSON.stringify(result, null, 2))
}

main()
