import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CODEC_IDS, createCodec, parseCodecSpec, type Codec } from '../../lib/codecs/index.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { produceRequest, type PartitionProduceResult } from '../../lib/kafka/produce-request.js'
import type { AckedBatch } from '../../lib/producer/producer.js'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { NON_IDEMPOTENT, stampProducerState, writeBatchHeader } from '../../lib/protocol/record-batch-builder.js'
import { innerOffsetsAreSequential, readBatch } from '../../lib/protocol/record-batch-reader.js'
import type { OutgoingRecord } from '../../lib/protocol/record.js'
import { writeZigzag, zigzagSize } from '../../lib/protocol/varint.js'
import { checkRecompression } from '../../lib/verify/recompression.js'
import { parseDumpLogSegments } from '../helpers/dump-log-segments.js'
import { useTestKafka } from '../helpers/kafka.js'

// DumpLogSegments reads the broker's segment files, which only the embedded JVM broker has on this host.
const kafka = useTestKafka({ jvmOnly: true })

const HOSTS = ['web-1', 'web-2', 'api-7', 'cache-3', 'edge-12']
const PATHS = ['/', '/index.html', '/api/v1/orders', '/api/v1/orders/{id}', '/static/app.js', '/healthz', '/login']

// Timestamps inside the topics' retention: the broker deletes segments of older records at its next retention check,
// and DumpLogSegments then finds no segment file to read.
const RECENT_START_MS = Date.now() - 60 * 60 * 1000

/** nginx-combined-like access log lines, deterministic but for their timestamps. */
function logRecords(count: number, start = RECENT_START_MS): OutgoingRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const host = HOSTS[i % HOSTS.length] ?? 'web-1'
    const path = (PATHS[(i * 7) % PATHS.length] ?? '/').replace('{id}', String(10_000 + ((i * 7919) % 5000)))
    const status = i % 53 === 0 ? 500 : i % 11 === 0 ? 404 : 200
    const line =
      `10.${i % 4}.${(i * 13) % 256}.${(i * 31) % 256} - - [18/May/2024:02:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')} +0000] ` +
      `"GET ${path} HTTP/1.1" ${status} ${200 + ((i * 104729) % 40000)} "-" "Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0.${i % 100}"`
    return { key: Buffer.from(host), value: Buffer.from(line), headers: [], timestamp: start + i * 7 }
  })
}

/** What DumpLogSegments prints as `compresscodec:` for each codec (checked against Kafka 4.1.1). */
const DUMP_CODEC_NAME: Record<string, string> = {
  none: 'none',
  gzip: 'gzip',
  snappy: 'snappy',
  lz4: 'lz4',
  zstd: 'zstd'
}

/**
 * A magic-2 batch written by hand, with each record's offsetDelta chosen by `offsetDelta` (a correct batch
 * uses the index; the Go client bug of the field report wrote 0 for every record).
 */
function handBuiltBatch(
  records: readonly OutgoingRecord[],
  codec: Codec,
  offsetDelta: (index: number) => number
): Buffer {
  const first = records[0]?.timestamp ?? 0
  const parts: Buffer[] = []
  let maxTimestamp = first
  records.forEach((record, i) => {
    const timestamp = record.timestamp ?? first
    maxTimestamp = Math.max(maxTimestamp, timestamp)
    const key = record.key
    const value = record.value
    const bodySize =
      1 +
      zigzagSize(timestamp - first) +
      zigzagSize(offsetDelta(i)) +
      zigzagSize(key === null ? -1 : key.length) +
      (key?.length ?? 0) +
      zigzagSize(value === null ? -1 : value.length) +
      (value?.length ?? 0) +
      zigzagSize(0)
    const buf = Buffer.alloc(zigzagSize(bodySize) + bodySize)
    let at = writeZigzag(buf, 0, bodySize)
    buf[at++] = 0
    at = writeZigzag(buf, at, timestamp - first)
    at = writeZigzag(buf, at, offsetDelta(i))
    at = writeZigzag(buf, at, key === null ? -1 : key.length)
    if (key !== null) at += key.copy(buf, at)
    at = writeZigzag(buf, at, value === null ? -1 : value.length)
    if (value !== null) at += value.copy(buf, at)
    at = writeZigzag(buf, at, 0) // no headers
    assert.equal(at, buf.length)
    parts.push(buf)
  })
  const plain = Buffer.concat(parts)
  const body = codec.id === 0 ? plain : codec.compress(plain)
  const out = Buffer.alloc(BATCH.HEADER_BYTES + body.length)
  body.copy(out, BATCH.HEADER_BYTES)
  writeBatchHeader(out, { count: records.length, attributes: codec.id, firstTimestamp: first, maxTimestamp })
  stampProducerState(out, NON_IDEMPOTENT) // producer fields and the CRC-32C
  return out
}

/** Sends one raw batch to partition 0 of `topic` and returns the broker's answer. */
async function sendRaw(topic: string, batch: Buffer): Promise<PartitionProduceResult> {
  const cluster = createCluster(kafka.connection, kafka.log)
  await cluster.connect()
  try {
    await cluster.addTargetTopic(topic)
    const leader = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === 0)?.leader
    assert.ok(leader !== undefined && leader >= 0, 'partition 0 has a leader')
    const broker = await cluster.findBroker({ nodeId: leader })
    const { request, response } = produceRequest({
      acks: -1,
      timeoutMs: 10_000,
      transactionalId: null,
      batches: [{ topic, partition: 0, batch }]
    })
    const results = await broker.connectionPool.send({ request, response })
    const result = results.find((r) => r.topic === topic && r.partition === 0)
    assert.ok(result, 'a result for partition 0')
    return result
  } finally {
    await cluster.disconnect()
  }
}

function ackedFor(topic: string, batch: Buffer, baseOffset: number, records: number): AckedBatch {
  return {
    topic,
    partition: 0,
    baseOffset,
    records,
    crc: batch.readUInt32BE(BATCH.CRC),
    sizeBytes: batch.length,
    uncompressedBytes: 0,
    compressCpuSeconds: 0,
    level: null
  }
}

/** 2,000 log records through squeeze's producer; every batch the broker acknowledged, as sent. */
async function produceLogs(topic: string, spec: string): Promise<{ acked: AckedBatch[]; records: OutgoingRecord[] }> {
  const producer = await kafka.startProducer({ codec: parseCodecSpec(spec), lingerMs: 20, batchSizeBytes: 32 * 1024 })
  const acked: AckedBatch[] = []
  producer.onBatchAcked((batch) => acked.push(batch))
  const records = logRecords(2000)
  for (const record of records) await producer.send({ topic, ...record })
  await producer.flush()
  assert.equal(producer.snapshot().recordsAcked, records.length)
  return { acked, records }
}

describe('the broker keeps squeeze batches as sent (compression.type=producer)', () => {
  for (const spec of ['none', 'gzip:6', 'snappy', 'lz4:9', 'zstd:3']) {
    it(`${spec}: every batch is stored with the producer's CRC, size and codec`, async (t) => {
      const partitions = 2
      const topic = await kafka.createTopic(t, { partitions, configs: { 'compression.type': 'producer' } })
      const { acked, records } = await produceLogs(topic, spec)
      assert.ok(acked.length >= 4, `several batches (got ${acked.length})`)
      assert.equal(
        acked.reduce((n, b) => n + b.records, 0),
        records.length
      )

      const stored = await kafka.readAll([topic])
      const report = checkRecompression(acked, stored)
      assert.equal(report.verdict, 'kept', JSON.stringify(report.examples))
      assert.equal(report.complete, true)
      assert.equal(report.batchesChecked, acked.length)
      assert.equal(report.batchesKept, acked.length)
      assert.equal(report.batchesRewritten, 0)
      assert.equal(report.storedBytes, report.sentBytes)
      const codecName = parseCodecSpec(spec).codec
      for (const { batch } of stored) assert.equal(batch.codecId, CODEC_IDS[codecName])

      const embedded = kafka.broker.embedded
      assert.ok(embedded !== undefined, 'the embedded broker, whose segment files DumpLogSegments reads')
      const files = Array.from({ length: partitions }, (_, p) =>
        join(embedded.kafkaLogDir, `${topic}-${p}`, '00000000000000000000.log')
      )
      const dump = await runKafkaJavaTool(
        KafkaMainClasses.DUMP_LOG_SEGMENTS,
        ['--files', files.join(','), '--deep-iteration'],
        { timeoutMs: 60_000 }
      )
      assert.equal(dump.code, 0, dump.stderr)
      const dumped = parseDumpLogSegments(dump.stdout)
      assert.equal(dumped.length, acked.length, 'one batch line per batch sent')
      for (let p = 0; p < partitions; p++) {
        const file = files[p]
        const inLog = dumped
          .filter((b) => b.file === file)
          .map((b) => ({
            baseOffset: b.baseOffset,
            count: b.count,
            size: b.size,
            crc: b.crc,
            codec: b.codec,
            isValid: b.isValid
          }))
        const sent = acked
          .filter((b) => b.partition === p)
          .sort((a, b) => a.baseOffset - b.baseOffset)
          .map((b) => ({
            baseOffset: b.baseOffset,
            count: b.records,
            size: b.sizeBytes,
            crc: b.crc,
            codec: DUMP_CODEC_NAME[codecName],
            isValid: true
          }))
        assert.deepEqual(inLog, sent, `partition ${p}: DumpLogSegments shows the batches as squeeze sent them`)
      }
    })
  }
})

describe('the check catches batches the broker rewrote', () => {
  it('a zstd:19 batch with every inner offsetDelta 0 (the Go client bug) is not stored as sent', async (t) => {
    const topic = await kafka.createTopic(t, { configs: { 'compression.type': 'producer' } })
    const zstd19 = createCodec(parseCodecSpec('zstd:19'))
    const records = logRecords(300)
    const good = handBuiltBatch(records, zstd19, (i) => i)
    const bad = handBuiltBatch(records, zstd19, () => 0)
    assert.equal(innerOffsetsAreSequential(readBatch(good)), true)
    assert.equal(
      innerOffsetsAreSequential(readBatch(bad)),
      false,
      'the hand-built batch really has non-sequential inner offsets'
    )

    const goodResult = await sendRaw(topic, good)
    assert.equal(goodResult.errorCode, 0)
    const badResult = await sendRaw(topic, bad)
    const acked = [ackedFor(topic, good, goodResult.baseOffset, records.length)]
    const stored = await kafka.readAll([topic])
    if (badResult.errorCode === 0) {
      // A broker that rebuilds the batch (what older Kafka documented, and what Kafka does when the codec changes).
      acked.push(ackedFor(topic, bad, badResult.baseOffset, records.length))
      const rebuilt = stored.find((s) => s.batch.baseOffset === badResult.baseOffset)
      assert.ok(rebuilt)
      assert.equal(innerOffsetsAreSequential(rebuilt.batch), true)
      assert.notEqual(rebuilt.batch.crc, bad.readUInt32BE(BATCH.CRC))
      assert.notEqual(rebuilt.batch.storedBytes, bad.length)
      const report = checkRecompression(acked, stored)
      assert.equal(report.verdict, 'recompressed')
      assert.equal(report.batchesKept, 1)
      assert.equal(report.batchesRewritten, 1)
    } else {
      // Kafka 4.1.1 (the code path dates from KAFKA-8106): when the batch codec equals the target codec the
      // validator iterates records without keys/values (PartialDefaultRecord); finding a non-sequential inner
      // offset it falls back to rebuilding from those records and throws UnsupportedOperationException
      // ("key is skipped in PartialDefaultRecord"), answered as UNKNOWN_SERVER_ERROR (-1). Nothing is stored.
      assert.equal(badResult.errorCode, -1, 'UNKNOWN_SERVER_ERROR')
      assert.equal(stored.length, 1, 'only the good batch is in the log')
      const report = checkRecompression(acked, stored)
      assert.equal(report.verdict, 'kept')
      assert.equal(report.batchesKept, 1)
    }
  })

  it('the same bad batch on a compression.type=gzip topic is rebuilt with sequential offsets and reported recompressed', async (t) => {
    const topic = await kafka.createTopic(t, { configs: { 'compression.type': 'gzip' } })
    const records = logRecords(300)
    const bad = handBuiltBatch(records, createCodec(parseCodecSpec('zstd:19')), () => 0)
    const result = await sendRaw(topic, bad)
    assert.equal(result.errorCode, 0)
    const stored = await kafka.readAll([topic])
    assert.equal(stored.length, 1)
    const batch = stored[0]?.batch
    assert.ok(batch)
    assert.equal(batch.codecId, CODEC_IDS.gzip)
    assert.equal(innerOffsetsAreSequential(batch), true, 'the broker renumbered the inner offsets')
    assert.notEqual(batch.crc, bad.readUInt32BE(BATCH.CRC))
    assert.notEqual(batch.storedBytes, bad.length)
    assert.deepEqual(
      batch.records.map((r) => r.value?.toString()),
      records.map((r) => r.value?.toString())
    )
    const report = checkRecompression([ackedFor(topic, bad, result.baseOffset, records.length)], stored)
    assert.equal(report.verdict, 'recompressed')
    assert.equal(report.batchesRewritten, 1)
    assert.equal(report.examples[0]?.storedCodec, 'gzip')
  })

  it('squeeze zstd:3 batches on a compression.type=gzip topic are all reported recompressed', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2, configs: { 'compression.type': 'gzip' } })
    const { acked } = await produceLogs(topic, 'zstd:3')
    const stored = await kafka.readAll([topic])
    for (const { batch } of stored) assert.equal(batch.codecId, CODEC_IDS.gzip)
    const report = checkRecompression(acked, stored)
    assert.equal(report.verdict, 'recompressed')
    assert.equal(report.complete, true)
    assert.equal(report.batchesChecked, acked.length)
    assert.equal(report.batchesRewritten, acked.length)
    assert.equal(report.batchesKept, 0)
    assert.ok(
      report.storedBytes > report.sentBytes,
      `gzip stores more than zstd:3 (${report.storedBytes} vs ${report.sentBytes})`
    )
    assert.ok(report.examples.every((e) => e.storedCodec === 'gzip'))
  })
})
