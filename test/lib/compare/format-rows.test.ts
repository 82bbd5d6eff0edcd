import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { FormatProjection } from '../../../lib/compare/format-rows.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'

/** Generated HttpRequest records in batches of `size`, as a consumer reads them back from a zstd:3 topic. */
function batches(count: number, size: number): Array<ReturnType<typeof readBatch>> {
  const generator = createGenerator('http', { seed: 11 })
  const codec = createCodec(parseCodecSpec('zstd:3'))
  const out = []
  for (let at = 0; at < count; at += size) {
    const records = Array.from({ length: Math.min(size, count - at) }, () => {
      const r = generator.next()
      return { key: r.key, value: r.value, headers: [], timestamp: r.timestampMs }
    })
    out.push(readBatch(buildBatch(records, codec).bytes))
  }
  return out
}

describe('FormatProjection', () => {
  it('rebuilds every batch as text lines and as JSON at the codec: counts, sizes and read costs per form', () => {
    const projection = new FormatProjection(parseCodecSpec('zstd:3'))
    // Enough records that parsing them back takes a measurable slice of the thread's CPU clock.
    const read = batches(30_000, 5000)
    for (const batch of read) projection.addBatch(batch.records, batch.storedBytes)
    const [text, json] = projection.rows()
    assert.ok(text !== undefined && json !== undefined)
    assert.deepEqual([text.format, json.format], ['text', 'json'])
    const stored = read.reduce((n, b) => n + b.storedBytes, 0)
    for (const row of [text, json]) {
      assert.equal(row.target, 'zstd:3')
      assert.equal(row.records, 30_000)
      assert.equal(row.batches, 6)
      assert.equal(row.skippedRecords, 0)
      assert.ok(row.storedBytes > 0 && row.storedBytes < row.uncompressedBytes, `${row.format} is compressed`)
      assert.equal(row.ratio, row.uncompressedBytes / row.storedBytes)
      assert.equal(row.storedVsRecords, row.storedBytes / stored)
      assert.ok(row.decodeCpuSecondsPerGiB > 0, `${row.format}: parsing back costs CPU`)
    }
    // JSON names every field in every record: more bytes before compression than the line.
    assert.ok(json.uncompressedBytes > text.uncompressedBytes)
  })

  it('a value that is not an HttpRequest is counted and left out of both forms', () => {
    const projection = new FormatProjection(parseCodecSpec('lz4'))
    const [batch] = batches(10, 10)
    assert.ok(batch !== undefined)
    const garbage = {
      offset: 10,
      timestamp: 0,
      key: null,
      value: Buffer.from('not a capnp message at all'),
      headers: []
    }
    projection.addBatch([...batch.records, garbage], batch.storedBytes)
    for (const row of projection.rows()) {
      assert.equal(row.records, 10)
      assert.equal(row.skippedRecords, 1)
    }
  })
})
