import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CODEC_NAMES, createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { ATTRIBUTE, BATCH } from '../../../lib/protocol/batch-layout.js'
import { crc32c } from '../../../lib/protocol/crc32c.js'
import {
  buildBatch,
  NON_IDEMPOTENT,
  sealRecords,
  stampProducerState
} from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'
import type { OutgoingRecord } from '../../../lib/protocol/record.js'

const T0 = 1_700_000_000_000

/** Null keys and values, headers, and timestamps that go back as well as forward (negative deltas). */
const RECORDS: OutgoingRecord[] = Array.from({ length: 60 }, (_, i) => ({
  key: i % 4 === 0 ? null : Buffer.from(`k${i}`),
  value: i % 9 === 2 ? null : Buffer.from(`value ${i} `.repeat(1 + (i % 5))),
  headers:
    i % 3 === 0
      ? []
      : [
          { key: 'trace', value: Buffer.from(`t${i}`) },
          { key: 'none', value: null }
        ],
  timestamp: T0 + (i % 7) * 1000 - i
}))

/** Rewrites a header field and the CRC, as a broker's or another client's batch would differ. */
function withHeader(batch: Buffer, edit: (b: Buffer) => void): Buffer {
  const copy = Buffer.from(batch)
  edit(copy)
  copy.writeUInt32BE(crc32c(copy, BATCH.ATTRIBUTES), BATCH.CRC)
  return copy
}

const asRead = (r: {
  offset: number
  timestamp: number
  key: Buffer | null
  value: Buffer | null
  headers: readonly unknown[]
}): unknown[] => [r.offset, r.timestamp, r.key, r.value, r.headers]

describe('ReadBatch.whole: a batch taken whole into a batch of another codec', () => {
  it('every codec into every codec: the new batch reads back as the source, record for record, with the new codec and header', () => {
    const producer = { producerId: 4242n, producerEpoch: 3, baseSequence: 17, transactional: true }
    for (const from of CODEC_NAMES) {
      const source = readBatch(buildBatch(RECORDS, createCodec(parseCodecSpec(from))).bytes)
      const whole = source.whole
      assert.ok(whole !== null, `${from}: a producer's batch can be taken whole`)
      for (const to of CODEC_NAMES) {
        const sealed = sealRecords(whole, createCodec(parseCodecSpec(to)), Buffer.allocUnsafe)
        stampProducerState(sealed.bytes, producer)
        const copy = readBatch(sealed.bytes)
        assert.equal(copy.codecId, createCodec(parseCodecSpec(to)).id, `${from} -> ${to}: codec bits`)
        assert.equal(copy.producerId, 4242n)
        assert.equal(copy.baseSequence, 17)
        assert.equal(copy.isTransactional, true)
        assert.deepEqual(copy.records.map(asRead), source.records.map(asRead), `${from} -> ${to}: the same records`)
      }
    }
  })

  it('null where the bytes would not read back the same: control, LogAppendTime, offset gaps, a batch entered mid-way', () => {
    const plain = buildBatch(RECORDS, createCodec(parseCodecSpec('none'))).bytes
    stampProducerState(plain, NON_IDEMPOTENT)
    assert.ok(readBatch(plain).whole !== null)
    const logAppend = withHeader(plain, (b) =>
      b.writeInt16BE(b.readInt16BE(BATCH.ATTRIBUTES) | ATTRIBUTE.TIMESTAMP_LOG_APPEND, BATCH.ATTRIBUTES)
    )
    assert.equal(readBatch(logAppend).whole, null, 'LogAppendTime')
    // A compacted batch keeps its last offset delta past the records left.
    const gap = withHeader(plain, (b) => b.writeInt32BE(RECORDS.length + 5, BATCH.LAST_OFFSET_DELTA))
    assert.equal(readBatch(gap).whole, null, 'offset deltas with a gap')
    assert.equal(readBatch(plain, { fromOffset: 10 }).whole, null, 'records before the fetch offset left out')
    const marker = buildBatch(
      [{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]), headers: [], timestamp: T0 }],
      createCodec(parseCodecSpec('none'))
    ).bytes
    const control = withHeader(marker, (b) =>
      b.writeInt16BE(ATTRIBUTE.CONTROL | ATTRIBUTE.TRANSACTIONAL, BATCH.ATTRIBUTES)
    )
    assert.equal(readBatch(control).whole, null, 'a transaction marker')
  })
})
