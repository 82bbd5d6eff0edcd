import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { ATTRIBUTE, BATCH } from '../../../lib/protocol/batch-layout.js'
import {
  buildBatch,
  NON_IDEMPOTENT,
  RecordBatchBuilder,
  stampProducerState
} from '../../../lib/protocol/record-batch-builder.js'
import { rawRecordAt, readBatch } from '../../../lib/protocol/record-batch-reader.js'
import type { IncomingRecord, OutgoingRecord, RawRecords } from '../../../lib/protocol/record.js'

const T0 = 1_700_000_000_000
const DAY_MS = 86_400_000

/**
 * Source records with every shape a copy must keep: null keys, null and empty values, no headers, several headers
 * (a null header value, a non-ASCII header key), and timestamps far apart in both directions, so that both the
 * source's and a destination's timestamp deltas need more than 32 bits (varlong).
 */
const SOURCE: OutgoingRecord[] = Array.from({ length: 120 }, (_, i) => ({
  key: i % 4 === 0 ? null : Buffer.from(`key-${i % 9}`),
  value: i % 11 === 3 ? null : i % 13 === 5 ? Buffer.alloc(0) : Buffer.from(`line ${i} `.repeat(1 + (i % 7))),
  headers:
    i % 3 === 0
      ? []
      : [
          { key: 'trace', value: Buffer.from(`t${i}`) },
          { key: 'empty', value: null },
          ...(i % 5 === 0 ? [{ key: 'clé-ключ', value: Buffer.from([0, 255, i]) }] : [])
        ],
  timestamp: T0 + (i % 10 === 0 ? 40 * DAY_MS : i % 10 === 1 ? -30 * DAY_MS : i * 7)
}))

/** One destination's batches filled from `from` on, either way, with the same batch.size: sealed with `codec`. */
function rebatch(
  source: { readonly records: readonly IncomingRecord[]; readonly raw: RawRecords },
  from: number,
  batchBytes: number,
  codec: string,
  raw: boolean
): Buffer[] {
  const batches: Buffer[] = []
  let builder = new RecordBatchBuilder(batchBytes)
  const close = (): void => {
    const sealed = builder.seal(createCodec(parseCodecSpec(codec)))
    stampProducerState(sealed.bytes, NON_IDEMPOTENT)
    batches.push(sealed.bytes)
    builder = new RecordBatchBuilder(batchBytes)
  }
  for (let i = from; i < source.raw.count; i++) {
    const record = source.records[i] as IncomingRecord
    const append = (): boolean =>
      raw
        ? builder.tryAppendRaw(
            source.raw.bytes,
            source.raw.starts[i] as number,
            source.raw.ends[i] as number,
            source.raw.timestamps[i] as number
          )
        : builder.tryAppend(record, record.timestamp)
    if (!append()) {
      close()
      assert.ok(append(), 'an empty batch takes any record')
    }
  }
  close()
  return batches
}

describe('records copied as read (RawRecords)', () => {
  for (const sourceCodec of ['none', 'zstd:3']) {
    it(`${sourceCodec} source: a batch built from the raw ranges is byte for byte the one built from the decoded records`, () => {
      const source = readBatch(buildBatch(SOURCE, createCodec(parseCodecSpec(sourceCodec))).bytes)
      const read = { records: source.records, raw: source.raw }
      assert.equal(read.raw.count, SOURCE.length)
      // From the middle of the source batch too, so that a destination batch starts at another record (other deltas).
      for (const from of [0, 1, 37]) {
        for (const batchBytes of [300, 2048, 1024 * 1024]) {
          for (const codec of ['none', 'lz4']) {
            const encoded = rebatch(read, from, batchBytes, codec, false)
            const copied = rebatch(read, from, batchBytes, codec, true)
            assert.equal(copied.length, encoded.length, `batches from ${from}, batch.size ${batchBytes}, ${codec}`)
            copied.forEach((bytes, b) =>
              assert.ok(
                bytes.equals(encoded[b] as Buffer),
                `batch ${b} from ${from}, batch.size ${batchBytes}, ${codec}`
              )
            )
          }
        }
      }
      // And what a destination reads back is the source record: key, value, headers, timestamp.
      const copies = rebatch(read, 0, 2048, 'lz4', true).flatMap((bytes) => readBatch(bytes).records)
      assert.deepEqual(
        copies.map(({ key, value, headers, timestamp }) => ({ key, value, headers, timestamp })),
        SOURCE
      )
    })
  }

  it("gives each record's offset, timestamp and data bytes, from the fetch position on, and decodes one record on demand into memory of its own", () => {
    const sealed = buildBatch(SOURCE, createCodec(parseCodecSpec('snappy')))
    sealed.bytes.writeBigInt64BE(5000n, BATCH.BASE_OFFSET)
    const batch = readBatch(sealed.bytes, { verifyCrc: false, fromOffset: 5010 })
    const { raw, records } = batch
    assert.equal(raw.count, SOURCE.length - 10)
    assert.deepEqual(
      [...raw.offsets],
      records.map((r) => r.offset)
    )
    assert.equal(raw.offsets[0], 5010)
    assert.deepEqual(
      [...raw.timestamps],
      records.map((r) => r.timestamp)
    )
    const dataBytes = (r: IncomingRecord): number =>
      (r.key?.length ?? 0) +
      (r.value?.length ?? 0) +
      r.headers.reduce((n, h) => n + Buffer.byteLength(h.key) + (h.value?.length ?? 0), 0)
    assert.deepEqual([...raw.dataBytes], records.map(dataBytes))
    const decoded = records.map((_, i) => rawRecordAt(raw, i))
    assert.deepEqual(decoded, records)
    // The reader decompresses the next batch over this one's memory: a record kept (a refused copy) must not change.
    const hex = (rs: readonly IncomingRecord[]): unknown =>
      rs.map((r) => [
        r.key?.toString('hex'),
        r.value?.toString('hex'),
        r.headers.map((h) => [h.key, h.value?.toString('hex')])
      ])
    const before = hex(decoded)
    raw.bytes.fill(0xee)
    assert.deepEqual(hex(decoded), before)
  })

  it("a LogAppendTime batch gives every record the broker's time, as decoding does", () => {
    const sealed = buildBatch(SOURCE.slice(0, 20), createCodec(parseCodecSpec('none')))
    sealed.bytes.writeInt16BE(ATTRIBUTE.TIMESTAMP_LOG_APPEND, BATCH.ATTRIBUTES)
    sealed.bytes.writeBigInt64BE(BigInt(T0 + 99), BATCH.MAX_TIMESTAMP)
    stampProducerState(sealed.bytes, NON_IDEMPOTENT)
    const { raw, records } = readBatch(sealed.bytes)
    assert.deepEqual(
      [...raw.timestamps],
      records.map((r) => r.timestamp)
    )
    assert.ok(raw.timestamps.every((t) => t === T0 + 99))
  })
})
