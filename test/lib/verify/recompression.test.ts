import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import type { AckedBatch } from '../../../lib/producer/producer.js'
import { BATCH } from '../../../lib/protocol/batch-layout.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'
import type { OutgoingRecord } from '../../../lib/protocol/record.js'
import { checkRecompression, type StoredBatch } from '../../../lib/verify/recompression.js'
import { parseDumpLogSegments } from '../../helpers/dump-log-segments.js'

function records(from: number, count: number): OutgoingRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    key: Buffer.from(`web-${(from + i) % 7}`),
    value: Buffer.from(
      `10.0.${i % 3}.${from + i} - - [18/May/2024:02:40:00 +0000] "GET /api/v1/items/${(from + i) % 41} HTTP/1.1" 200 ${512 + i}`
    ),
    timestamp: 1_716_000_000_000 + from + i
  }))
}

/** A batch as the producer sent it, and as a broker would serve it back at `baseOffset`. */
function sentAndStored(
  topic: string,
  partition: number,
  baseOffset: number,
  spec: string,
  storedSpec: string = spec
): { acked: AckedBatch; stored: StoredBatch } {
  const recs = records(baseOffset, 40)
  const sent = buildBatch(recs, createCodec(parseCodecSpec(spec)), undefined, 0)
  const acked: AckedBatch = {
    topic,
    partition,
    baseOffset,
    records: sent.recordCount,
    crc: sent.bytes.readUInt32BE(BATCH.CRC),
    sizeBytes: sent.bytes.length,
    uncompressedBytes: sent.uncompressedBytes,
    compressCpuSeconds: sent.compressCpuSeconds,
    level: parseCodecSpec(spec).level
  }
  const storedBytes = Buffer.from(
    storedSpec === spec ? sent.bytes : buildBatch(recs, createCodec(parseCodecSpec(storedSpec)), undefined, 0).bytes
  )
  // The broker assigns the base offset and leader epoch in place; neither is covered by the CRC.
  storedBytes.writeBigInt64BE(BigInt(baseOffset), BATCH.BASE_OFFSET)
  storedBytes.writeInt32BE(3, BATCH.PARTITION_LEADER_EPOCH)
  return { acked, stored: { topic, partition, batch: readBatch(storedBytes, { verifyCrc: true }) } }
}

describe('checkRecompression', () => {
  it('reports kept when every batch comes back with the CRC and size it was sent with', () => {
    const pairs = [
      sentAndStored('logs', 0, 0, 'zstd:3'),
      sentAndStored('logs', 0, 40, 'zstd:3'),
      sentAndStored('logs', 1, 0, 'zstd:3')
    ]
    const report = checkRecompression(
      pairs.map((p) => p.acked),
      pairs.map((p) => p.stored)
    )
    assert.equal(report.verdict, 'kept')
    assert.equal(report.batchesChecked, 3)
    assert.equal(report.batchesKept, 3)
    assert.equal(report.batchesRewritten, 0)
    assert.equal(report.batchesMissing, 0)
    assert.equal(report.complete, true)
    assert.equal(report.sentBytes, report.storedBytes)
    assert.deepEqual(report.examples, [])
  })

  it('reports recompressed with examples when the broker rebuilt a batch in another codec', () => {
    const kept = sentAndStored('logs', 0, 0, 'zstd:19')
    const rebuilt = sentAndStored('logs', 0, 40, 'zstd:19', 'gzip:6')
    const report = checkRecompression([kept.acked, rebuilt.acked], [kept.stored, rebuilt.stored])
    assert.equal(report.verdict, 'recompressed')
    assert.equal(report.batchesChecked, 2)
    assert.equal(report.batchesKept, 1)
    assert.equal(report.batchesRewritten, 1)
    assert.equal(report.examples.length, 1)
    const example = report.examples[0]
    assert.ok(example)
    assert.equal(example.fate, 'rewritten')
    assert.equal(example.baseOffset, 40)
    assert.equal(example.storedCodec, 'gzip')
    assert.equal(example.storedRecords, 40)
    assert.equal(example.sentCrc, rebuilt.acked.crc)
    assert.notEqual(example.storedCrc, example.sentCrc)
    assert.equal(example.storedBytes, rebuilt.stored.batch.storedBytes)
    assert.ok(report.storedBytes > report.sentBytes, 'gzip:6 stores more than zstd:19')
  })

  it('a batch of the same size but another CRC counts as rewritten', () => {
    const pair = sentAndStored('logs', 0, 0, 'none')
    const report = checkRecompression([{ ...pair.acked, crc: (pair.acked.crc ^ 1) >>> 0 }], [pair.stored])
    assert.equal(report.verdict, 'recompressed')
    assert.equal(report.batchesRewritten, 1)
    assert.equal(report.examples[0]?.storedBytes, pair.acked.sizeBytes)
  })

  it('matches on topic, partition and base offset, and counts unmatched batches as missing, not kept', () => {
    const a = sentAndStored('logs', 0, 0, 'lz4:9')
    const b = sentAndStored('other', 0, 0, 'lz4:9')
    const c = sentAndStored('logs', 1, 0, 'lz4:9')
    // Only `a` was read back; `b` and `c` share its base offset elsewhere; one ack had no offset (acks=0).
    const report = checkRecompression([a.acked, b.acked, c.acked, { ...a.acked, baseOffset: -1 }], [a.stored])
    assert.equal(report.verdict, 'kept')
    assert.equal(report.batchesChecked, 1)
    assert.equal(report.batchesKept, 1)
    assert.equal(report.batchesMissing, 3)
    assert.equal(report.complete, false)
    assert.deepEqual(
      report.examples.map((e) => [e.topic, e.partition, e.fate]),
      [
        ['other', 0, 'missing'],
        ['logs', 1, 'missing'],
        ['logs', 0, 'missing']
      ]
    )
  })

  it('reports nothing checked as incomplete, and caps the examples', () => {
    const empty = checkRecompression([], [])
    assert.equal(empty.batchesChecked, 0)
    assert.equal(empty.complete, false)
    const pairs = Array.from({ length: 8 }, (_, i) => sentAndStored('logs', 0, i * 40, 'snappy', 'gzip:1'))
    const report = checkRecompression(
      pairs.map((p) => p.acked),
      pairs.map((p) => p.stored),
      { maxExamples: 3 }
    )
    assert.equal(report.batchesRewritten, 8)
    assert.equal(report.examples.length, 3)
    assert.equal(report.verdict, 'recompressed')
  })
})

// Captured from Kafka 4.1.1: `kafka.tools.DumpLogSegments --files …/sample-logs-0/00000000000000000000.log --deep-iteration`
// after squeeze's producer wrote one lz4:9 and one zstd:3 batch of 3 records (acked CRCs 231839455 and 2748575944,
// sizes 149 and 139 bytes), followed by a gzip batch line from another run.
const DUMP_SAMPLE = `Dumping /tmp/squeeze-kafka-NHOXRy/kafka-logs/sample-logs-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 0 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1716000000002 size: 149 magic: 2 compresscodec: lz4 crc: 231839455 isvalid: true
| offset: 0 CreateTime: 1716000000000 keySize: 5 valueSize: 21 sequence: 0 headerKeys: []
| offset: 1 CreateTime: 1716000000001 keySize: 5 valueSize: 21 sequence: 1 headerKeys: [trace]
| offset: 2 CreateTime: 1716000000002 keySize: 5 valueSize: 21 sequence: 2 headerKeys: []
baseOffset: 3 lastOffset: 5 count: 3 baseSequence: 0 lastSequence: 2 producerId: 1 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 149 CreateTime: 1716000000002 size: 139 magic: 2 compresscodec: zstd crc: 2748575944 isvalid: true
| offset: 3 CreateTime: 1716000000000 keySize: 5 valueSize: 21 sequence: 0 headerKeys: []
| offset: 4 CreateTime: 1716000000001 keySize: 5 valueSize: 21 sequence: 1 headerKeys: [trace]
| offset: 5 CreateTime: 1716000000002 keySize: 5 valueSize: 21 sequence: 2 headerKeys: []
Dumping /tmp/squeeze-kafka-s2pEDC/kafka-logs/test-97c1d64a-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 299 count: 300 baseSequence: 0 lastSequence: 299 producerId: 1 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1795977945499 size: 2108 magic: 2 compresscodec: gzip crc: 3770406467 isvalid: true
| offset: 0 CreateTime: 1795977945491 keySize: 2 valueSize: 18 sequence: 0 headerKeys: []
`

describe('parseDumpLogSegments', () => {
  it('parses every batch line of real Kafka 4.1.1 output and ignores record lines', () => {
    const batches = parseDumpLogSegments(DUMP_SAMPLE)
    assert.deepEqual(batches, [
      {
        file: '/tmp/squeeze-kafka-NHOXRy/kafka-logs/sample-logs-0/00000000000000000000.log',
        baseOffset: 0,
        lastOffset: 2,
        count: 3,
        size: 149,
        codec: 'lz4',
        crc: 231839455,
        isValid: true,
        isControl: false,
        isTransactional: false,
        producerId: 0,
        position: 0
      },
      {
        file: '/tmp/squeeze-kafka-NHOXRy/kafka-logs/sample-logs-0/00000000000000000000.log',
        baseOffset: 3,
        lastOffset: 5,
        count: 3,
        size: 139,
        codec: 'zstd',
        crc: 2748575944,
        isValid: true,
        isControl: false,
        isTransactional: false,
        producerId: 1,
        position: 149
      },
      {
        file: '/tmp/squeeze-kafka-s2pEDC/kafka-logs/test-97c1d64a-0/00000000000000000000.log',
        baseOffset: 0,
        lastOffset: 299,
        count: 300,
        size: 2108,
        codec: 'gzip',
        crc: 3770406467,
        isValid: true,
        isControl: false,
        isTransactional: false,
        producerId: 1,
        position: 0
      }
    ])
  })

  it('lower-cases codec names and reads isvalid: false', () => {
    const line =
      'baseOffset: 10 lastOffset: 10 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 4096 CreateTime: 1 size: 78 magic: 2 compresscodec: NONE crc: 12 isvalid: false'
    const [batch] = parseDumpLogSegments(`${line}\r\n`)
    assert.ok(batch)
    assert.equal(batch.file, undefined)
    assert.equal(batch.codec, 'none')
    assert.equal(batch.isValid, false)
    assert.equal(batch.isControl, true)
    assert.equal(batch.isTransactional, true)
    assert.equal(batch.producerId, -1)
    assert.equal(batch.position, 4096)
  })

  it('returns no batches for an empty segment and rejects a batch line without its fields', () => {
    assert.deepEqual(parseDumpLogSegments('Dumping /x/00000000000000000000.log\nLog starting offset: 0\n'), [])
    assert.throws(() => parseDumpLogSegments('baseOffset: 0 lastOffset: 1 count: 2'), /lacks compresscodec/)
    assert.throws(
      () => parseDumpLogSegments('baseOffset: 0 lastOffset: 1 count: 2 compresscodec: zstd crc: 1'),
      /lacks a numeric size/
    )
  })
})
