import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FanOut, type FanOutProducer } from '../../../lib/copier/fan-out.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { KafkaErrorCode } from '../../../lib/kafka/error-codes.js'
import { createLogger } from '../../../lib/log/logger.js'
import {
  DEFAULT_PRODUCER_CONFIG,
  Producer,
  type DeliveryFailure,
  type ProducerRecord
} from '../../../lib/producer/producer.js'
import { createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'
import { rawRecordAt, readBatch } from '../../../lib/protocol/record-batch-reader.js'
import type { IncomingRecord, RawRecords } from '../../../lib/protocol/record.js'
import { FakeCluster, settle, until } from '../../helpers/fake-cluster.js'

const log = createLogger({ level: 'silent', name: 'test' })

/** Source records at `offsets`, each value naming its offset; `big` ones over max.request.size, `refuse` ones marked. */
function sourceRecords(
  offsets: readonly number[],
  big: ReadonlySet<number> = new Set(),
  refuse: ReadonlySet<number> = new Set()
): IncomingRecord[] {
  return offsets.map((offset) => ({
    offset,
    timestamp: 1_700_000_000_000 + offset,
    key: offset % 3 === 0 ? null : Buffer.from(`k${offset}`),
    value: Buffer.from(
      `${refuse.has(offset) ? 'refuse-me ' : ''}record ${offset} ${'x'.repeat(big.has(offset) ? 5000 : 40)}`
    ),
    headers: offset % 4 === 0 ? [{ key: 'trace', value: Buffer.from(`t${offset}`) }] : []
  }))
}

/** The records as the copier reads them: in one source batch, at their own offsets. */
function asRead(records: readonly IncomingRecord[]): RawRecords {
  const raw = readBatch(buildBatch(records, createCodec(parseCodecSpec('none'))).bytes).raw
  return { ...raw, offsets: Float64Array.from(records, (r) => r.offset) }
}

/** A producer that takes records until `failOn` says otherwise, recording what it accepted. */
class RecordingProducer implements FanOutProducer {
  readonly accepted: ProducerRecord[] = []

  constructor(private readonly failOn: (record: ProducerRecord) => SqueezeError | undefined) {}

  snapshot(): { recordsAccepted: number } {
    return { recordsAccepted: this.accepted.length }
  }

  async sendBatchTo(): Promise<boolean> {
    return false
  }

  async sendRawTo(topic: string, partition: number, records: RawRecords, from: number, to: number): Promise<void> {
    for (let i = from; i < to; i++) {
      const { key, value, headers, timestamp } = rawRecordAt(records, i)
      const record: ProducerRecord = { topic, partition, key, value, headers, timestamp }
      const error = this.failOn(record)
      if (error !== undefined) throw error
      this.accepted.push(record)
      // A wait for buffer.memory now and then, as the real producer's.
      if (this.accepted.length % 7 === 0) await settle()
    }
  }
}

describe('FanOut', () => {
  it("with the real producer: every destination gets every record in order; a copy refused at send comes back per destination in source order; a destination's refusal maps back to its source offset", async () => {
    const cluster = new FakeCluster({ topics: { a: 2, b: 2 } })
    // Small batches, so a partition's copies span several batches and the refused one sits in the middle of one; one
    // batch in flight per partition, because the fake cluster answers without checking sequences as a broker would.
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        codec: { codec: 'lz4', level: 1 },
        compressionThreads: 0,
        lingerMs: 60_000,
        batchSizeBytes: 1024,
        maxRequestSizeBytes: 4096,
        maxInFlightPerPartition: 1
      },
      { cluster, log }
    )
    await producer.start()
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((failure) => failures.push(failure))
    const fanOut = new FanOut(producer, { sourceTopic: 'src', destinations: ['a', 'b'], exactlyOnce: false })
    // Offsets with gaps (a transaction marker, compaction); 110 and 114 (one slice) are over max.request.size; b refuses 125.
    const offsets = Array.from({ length: 40 }, (_, i) => 100 + i).filter((o) => o !== 120 && o !== 121)
    const records = sourceRecords(offsets, new Set([110, 114]), new Set([125]))
    const raw = asRead(records)
    const refused = [...(await fanOut.send(1, raw, 0, 15)), ...(await fanOut.send(1, raw, 15, raw.count))]
    assert.deepEqual(
      refused.map((p) => [p.record.offset, p.destination, p.code, p.topic, p.partition]),
      [
        [110, 'a', ErrorCodes.RECORD_TOO_LARGE, 'src', 1],
        [110, 'b', ErrorCodes.RECORD_TOO_LARGE, 'src', 1],
        [114, 'a', ErrorCodes.RECORD_TOO_LARGE, 'src', 1],
        [114, 'b', ErrorCodes.RECORD_TOO_LARGE, 'src', 1]
      ]
    )
    assert.deepEqual(
      refused[0]?.record,
      records[offsets.indexOf(110)],
      'the refused record as read, for the dead-letter topic'
    )

    let flushed = false
    void producer.flush().then(() => (flushed = true))
    await until(() => {
      // b's partition 1 refuses any batch holding the marked record (over its max.message.bytes, say): the producer splits it down to that one record.
      for (const call of cluster.pending())
        call.respond(
          call.batches.some((b) => b.topic === 'b' && b.values.some((v) => v.startsWith('refuse-me')))
            ? { 'b-1': KafkaErrorCode.MESSAGE_TOO_LARGE }
            : 0
        )
      return flushed
    }, 'every copy acknowledged or failed')
    const values = (skip: readonly number[]): string[] =>
      records.filter((r) => !skip.includes(r.offset)).map((r) => r.value?.toString() ?? '')
    assert.deepEqual(cluster.log.get('a-1'), values([110, 114]))
    assert.deepEqual(cluster.log.get('b-1'), values([110, 114, 125]))
    assert.equal(cluster.log.get('a-0'), undefined, "the source partition's copies stay in that partition")

    assert.equal(failures.length, 1)
    const [failure] = failures as [DeliveryFailure]
    assert.equal(failure.topic, 'b')
    assert.deepEqual(
      failure.sent.map((_, i) => fanOut.sourceOffset('b', 1, failure.firstRecordIndex + i)),
      [125]
    )
    assert.deepEqual(failure.sent[0]?.value, records[offsets.indexOf(125)]?.value)
    // Every copy a accepted maps back, one after the other, around the gaps and the refused ones.
    assert.deepEqual(
      offsets.filter((o) => o !== 110 && o !== 114).map((_, i) => fanOut.sourceOffset('a', 1, i)),
      offsets.filter((o) => o !== 110 && o !== 114)
    )
    fanOut.forget(fanOut.marks())
    assert.equal(fanOut.sourceOffset('b', 1, failure.firstRecordIndex), undefined)
    await producer.close()
  })

  it('sendBatch with the real producer: a source batch becomes one idempotent batch per destination, in order with re-batched copies; one over batch.size is re-batched', async () => {
    const cluster = new FakeCluster({ topics: { a: 2, b: 2 }, autoRespond: true })
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        topicCodecs: { a: { codec: 'zstd', level: 3 }, b: { codec: 'none', level: null } },
        compressionThreads: 0,
        lingerMs: 60_000,
        batchSizeBytes: 4096
      },
      { cluster, log }
    )
    await producer.start()
    const fanOut = new FanOut(producer, { sourceTopic: 'src', destinations: ['a', 'b'], exactlyOnce: false })
    // Source batches at their offsets in the log (the base offset is outside the CRC, as the broker assigns it).
    const at = (baseOffset: number, count: number, codec: string): ReturnType<typeof readBatch> => {
      const bytes = buildBatch(
        sourceRecords(Array.from({ length: count }, (_, i) => baseOffset + i)),
        createCodec(parseCodecSpec(codec))
      ).bytes
      bytes.writeBigInt64BE(BigInt(baseOffset), 0)
      return readBatch(bytes)
    }
    const first = at(0, 30, 'lz4')
    const big = at(30, 80, 'gzip')
    const rest = at(110, 5, 'none')
    assert.ok(first.whole !== null && big.whole !== null && big.uncompressedBytes > 4096)
    assert.deepEqual(await fanOut.send(1, rest.raw, 0, 2), [], 'two records into an open batch')
    assert.deepEqual(await fanOut.sendBatch(1, first.raw, first.whole), [])
    assert.deepEqual(await fanOut.sendBatch(1, big.raw, big.whole), [])
    assert.equal(producer.snapshot().recordsAccepted, 2 * (2 + 30 + 80))
    await producer.flush()
    const values = (batch: typeof first): string[] => batch.records.map((r) => r.value?.toString() ?? '')
    const expected = [...values(rest).slice(0, 2), ...values(first), ...values(big)]
    for (const topic of ['a', 'b']) {
      assert.deepEqual(cluster.log.get(`${topic}-1`), expected, `${topic}: every copy in source order`)
      const sent = cluster.calls.flatMap((c) => c.batches).filter((b) => b.topic === topic)
      assert.equal(sent[0]?.values.length, 2, `${topic}: the open batch closes before the whole one`)
      assert.deepEqual(sent[1]?.values, values(first), `${topic}: the source batch as one batch`)
      assert.ok(
        sent.slice(2).every((b) => b.values.length < 80),
        `${topic}: the batch over batch.size is re-batched`
      )
      assert.ok(
        sent.every((b) => b.producerId >= 0n),
        `${topic}: the producer's own id on every batch`
      )
      assert.deepEqual(
        sent.map((b) => b.baseSequence),
        sent.map((_, i) => sent.slice(0, i).reduce((n, b) => n + b.values.length, 0)),
        `${topic}: sequences follow on`
      )
    }
    assert.deepEqual(
      expected.map((_, i) => fanOut.sourceOffset('a', 1, i)),
      [110, 111, ...Array.from({ length: 110 }, (_, i) => i)],
      'each copy maps back to its source offset'
    )
    await producer.close()
  })

  it('a failure to accept rejects, and the copies accepted before it stay accounted for (a rerun slice maps after them)', async () => {
    let failing = true
    const producer = new RecordingProducer((record) =>
      failing && record.topic === 'b' && record.value?.toString().startsWith('record 9 ') === true
        ? new SqueezeError(ErrorCodes.PRODUCER_CLOSED, 'closing')
        : undefined
    )
    const fanOut = new FanOut(producer, { sourceTopic: 'src', destinations: ['a', 'b', 'c'], exactlyOnce: false })
    const records = sourceRecords(Array.from({ length: 12 }, (_, i) => i))
    const raw = asRead(records)
    await assert.rejects(fanOut.send(0, raw, 0, raw.count), { code: ErrorCodes.PRODUCER_CLOSED })
    const copies = (topic: string): string[] =>
      producer.accepted.filter((r) => r.topic === topic).map((r) => r.value?.toString() ?? '')
    assert.equal(copies('a').length, 12)
    assert.equal(copies('b').length, 9)
    assert.equal(copies('c').length, 0, 'c not reached: the slice stops at the failure')
    assert.deepEqual(
      [7, 8, 9].map((i) => fanOut.sourceOffset('b', 0, i)),
      [7, 8, undefined]
    )
    failing = false
    assert.deepEqual(await fanOut.send(0, raw, 0, raw.count), [])
    assert.deepEqual(
      [8, 9, 10, 20, 21].map((i) => fanOut.sourceOffset('b', 0, i)),
      [8, 0, 1, 11, undefined],
      "b's copies count on from where it stopped"
    )
    assert.deepEqual(
      producer.accepted.filter((r) => r.topic === 'c').map((r) => [r.partition, r.timestamp, r.key, r.headers]),
      records.map((r) => [0, r.timestamp, r.key, r.headers])
    )
  })

  it('exactly-once: a copy refused at send rejects (a transaction cannot leave it out), and no offsets are kept', async () => {
    const producer = new RecordingProducer((record) =>
      (record.value?.length ?? 0) > 1000
        ? new SqueezeError(ErrorCodes.RECORD_TOO_LARGE, 'over max.request.size')
        : undefined
    )
    const fanOut = new FanOut(producer, { sourceTopic: 'src', destinations: ['a', 'b'], exactlyOnce: true })
    assert.deepEqual(await fanOut.send(2, asRead(sourceRecords([1, 2, 3])), 0, 3), [])
    assert.equal(fanOut.sourceOffset('a', 2, 0), undefined)
    await assert.rejects(fanOut.send(2, asRead(sourceRecords([4, 5, 6], new Set([5]))), 0, 3), {
      code: ErrorCodes.RECORD_TOO_LARGE
    })
    assert.equal(producer.accepted.length, 7, "a's copies before the refused one, and none of b's")
  })
})
