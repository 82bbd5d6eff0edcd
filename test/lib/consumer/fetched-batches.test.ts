import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec } from '../../../lib/codecs/index.js'
import { skipReason, splitFetched } from '../../../lib/consumer/fetched-batches.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { BATCH } from '../../../lib/protocol/batch-layout.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'

/** Three stored batches at offsets 0..2, 3..6 and 7..11, as a fetch answer holds them. */
function recordSet(): Buffer {
  const codec = createCodec({ codec: 'lz4', level: 1 })
  let base = 0
  return Buffer.concat(
    [3, 4, 5].map((count) => {
      const records = Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), headers: [] }))
      const bytes = Buffer.from(buildBatch(records, codec).bytes)
      bytes.writeBigInt64BE(BigInt(base), BATCH.BASE_OFFSET)
      base += count
      return bytes
    })
  )
}

const LIMITS = { from: 0, highWatermark: 12, maxBatchBytes: 1024 * 1024 }

/** Where the second batch starts in recordSet(). */
function secondAt(data: Buffer): number {
  return BATCH.LOG_OVERHEAD + data.readInt32BE(BATCH.LENGTH)
}

describe('splitFetched: whole batches, with a corrupt length or offsets caught by their bounds', () => {
  it('cuts an intact answer into its batches and leaves a short tail for the next fetch', () => {
    const data = recordSet()
    const offsets = splitFetched(data, LIMITS).batches.map((b) => [b.baseOffset, b.lastOffset])
    assert.deepEqual(offsets, [
      [0, 2],
      [3, 6],
      [7, 11]
    ])
    const cut = splitFetched(data.subarray(0, data.length - 5), LIMITS)
    assert.deepEqual(
      cut.batches.map((b) => b.lastOffset),
      [2, 6]
    )
    assert.equal(cut.corrupt, null)
  })

  for (const length of [-1, 0, BATCH.HEADER_BYTES - BATCH.LOG_OVERHEAD - 1, 0x7ffffff0]) {
    it(`a batch length of ${length} ends the split with that batch's offsets, to skip past it`, () => {
      const data = recordSet()
      data.writeInt32BE(length, secondAt(data) + BATCH.LENGTH)
      const { batches, corrupt } = splitFetched(data, LIMITS)
      assert.deepEqual(
        batches.map((b) => b.lastOffset),
        [2]
      )
      const found = [corrupt?.baseOffset, corrupt?.lastOffset, corrupt?.error.code]
      assert.deepEqual(found, [3, 6, ErrorCodes.BATCH_FRAMING])
      assert.equal(skipReason(corrupt?.error as SqueezeError), 'framing')
    })
  }

  it('a first batch whose offsets lie outside the fetch (garbage header) moves the reader on by one offset', () => {
    const data = recordSet()
    data.writeBigInt64BE(1n << 50n, BATCH.BASE_OFFSET)
    const { batches, corrupt } = splitFetched(data, { ...LIMITS, from: 0 })
    assert.deepEqual(batches, [])
    assert.deepEqual([corrupt?.baseOffset, corrupt?.lastOffset], [0, 0])
  })

  it('reads batches that end past the reported high watermark: the broker reads to a newer one than it reports', () => {
    const offsets = splitFetched(recordSet(), { ...LIMITS, highWatermark: 3 }).batches.map((b) => b.lastOffset)
    assert.deepEqual(offsets, [2, 6, 11])
    const atTheEnd = splitFetched(recordSet(), { ...LIMITS, highWatermark: 0 })
    assert.deepEqual([atTheEnd.batches.length, atTheEnd.corrupt], [3, null])
  })

  it('a first batch that leaves a gap and starts past the high watermark is corrupt framing', () => {
    const data = recordSet()
    data.writeBigInt64BE(5n, BATCH.BASE_OFFSET)
    const { batches, corrupt } = splitFetched(data, { ...LIMITS, highWatermark: 3 })
    assert.deepEqual(batches, [])
    assert.deepEqual([corrupt?.baseOffset, corrupt?.lastOffset, corrupt?.error.code], [0, 0, ErrorCodes.BATCH_FRAMING])
  })

  it('a later batch that leaves a gap past the high watermark ends the split quietly, to be judged as a first one', () => {
    const data = recordSet()
    data.writeBigInt64BE(100n, secondAt(data) + BATCH.BASE_OFFSET)
    const { batches, corrupt } = splitFetched(data, LIMITS)
    assert.deepEqual(
      batches.map((b) => b.lastOffset),
      [2]
    )
    assert.equal(corrupt, null)
  })

  it('a later batch whose offsets go backwards ends the split quietly: the next fetch starts after the good ones', () => {
    const data = recordSet()
    data.writeBigInt64BE(1n, secondAt(data) + BATCH.BASE_OFFSET)
    const { batches, corrupt } = splitFetched(data, LIMITS)
    assert.deepEqual(
      batches.map((b) => b.lastOffset),
      [2]
    )
    assert.equal(corrupt, null)
  })

  it('names the decompression cap and other read errors by their skip reason', () => {
    assert.equal(skipReason(new SqueezeError(ErrorCodes.CODEC_OUTPUT_LIMIT, 'x')), 'uncompressed_limit')
    assert.equal(skipReason(new SqueezeError(ErrorCodes.BATCH_CORRUPT, 'x')), 'corrupt')
    assert.equal(skipReason(new SqueezeError(ErrorCodes.CODEC_CORRUPT, 'x')), 'corrupt')
  })
})
