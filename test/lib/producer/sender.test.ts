import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../lib/errors.js'
import { KafkaErrorCode } from '../../../lib/kafka/error-codes.js'
import { createLogger } from '../../../lib/log/logger.js'
import {
  DEFAULT_PRODUCER_CONFIG,
  Producer,
  type DeliveryFailure,
  type ProducerConfig
} from '../../../lib/producer/producer.js'
import { FakeCluster, settle, until, type ProduceCall } from '../../helpers/fake-cluster.js'

const log = createLogger({ level: 'silent', name: 'test' })

/** Inline sealing, no codec, no linger: each flush() closes the open batch at once, so a test decides the batches. */
function newProducer(cluster: FakeCluster, overrides: Partial<ProducerConfig> = {}): Producer {
  const config: ProducerConfig = {
    ...DEFAULT_PRODUCER_CONFIG,
    codec: { codec: 'none', level: null },
    compressionThreads: 0,
    lingerMs: 60_000,
    retryBackoffMs: 1,
    retryBackoffMaxMs: 1,
    ...overrides
  }
  return new Producer(config, { cluster, log })
}

/** One single-record batch per value, all on partition 0 of topic t. */
async function batches(producer: Producer, values: readonly string[], partition = 0): Promise<void> {
  for (const value of values) {
    await producer.send({ topic: 't', partition, key: null, value: Buffer.from(value) })
    void producer.flush()
  }
}

function sequences(calls: readonly ProduceCall[]): number[] {
  return calls.flatMap((call) => call.batches.map((b) => b.baseSequence))
}

async function finish(cluster: FakeCluster, producer: Producer): Promise<void> {
  cluster.autoRespond = true
  for (const call of cluster.pending()) call.respond(0)
  await producer.close()
}

describe('sender', () => {
  it("sends a partition's first batch of a producer id alone, then up to max.in.flight batches in order", async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    await producer.start()
    await batches(producer, ['a', 'b', 'c', 'd', 'e', 'f', 'g'])
    await until(() => cluster.calls.length === 1, 'the first batch')
    await settle()
    assert.equal(cluster.calls.length, 1, 'the broker has no sequence of this producer id yet: one batch goes alone')
    cluster.calls[0]!.respond(0)
    await until(() => cluster.calls.length === 6, 'five batches in flight')
    await settle()
    assert.equal(cluster.calls.length, 6, 'max.in.flight.requests.per.connection is 5')
    assert.deepEqual(sequences(cluster.calls), [0, 1, 2, 3, 4, 5])
    cluster.calls[1]!.respond(0)
    await until(() => cluster.calls.length === 7, 'the seventh batch once one came back')
    assert.deepEqual(sequences(cluster.calls.slice(6)), [6])
    await finish(cluster, producer)
    assert.deepEqual(cluster.log.get('t-0'), ['a', 'b', 'c', 'd', 'e', 'f', 'g'])
  })

  it('after a failure waits for every in-flight batch, then resends from the first unacknowledged one, in order', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    await producer.start()
    await batches(producer, ['a', 'b', 'c', 'd', 'e', 'f'])
    await until(() => cluster.calls.length === 1, 'the first batch')
    cluster.calls[0]!.respond(0)
    await until(() => cluster.calls.length === 6, 'five batches in flight')
    cluster.calls[1]!.respond(KafkaErrorCode.NOT_LEADER_FOR_PARTITION)
    // The broker refuses what overtook the failed batch; none of it is a sequence hole.
    cluster.calls[2]!.respond(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    await settle()
    assert.equal(cluster.calls.length, 6, 'nothing is resent while batches of the partition are still in flight')
    cluster.calls[3]!.respond(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    cluster.calls[4]!.respond(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    await settle()
    assert.equal(cluster.calls.length, 6)
    cluster.calls[5]!.respond(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    await until(() => cluster.calls.length === 11, 'the resent batches')
    const resent = cluster.calls.slice(6)
    assert.deepEqual(
      resent.map((c) => c.batches[0]?.values[0]),
      ['b', 'c', 'd', 'e', 'f']
    )
    assert.deepEqual(
      sequences(resent),
      [1, 2, 3, 4, 5],
      'the same sequence numbers: the broker drops any it already wrote'
    )
    assert.equal(cluster.initProducerIdCalls.length, 1, 'no new producer id: the sequences have no hole')
    assert.equal(producer.snapshot().retries, 5)
    await finish(cluster, producer)
  })

  it('on UNKNOWN_PRODUCER_ID gets a new producer id and resends with sequences from 0', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    await producer.start()
    await batches(producer, ['a'])
    await until(() => cluster.calls.length === 1, 'the batch')
    cluster.calls[0]!.respond(KafkaErrorCode.UNKNOWN_PRODUCER_ID)
    await until(() => cluster.calls.length === 2, 'the resent batch')
    const [first, second] = cluster.calls.map((c) => c.batches[0]!)
    assert.equal(cluster.initProducerIdCalls.length, 2)
    assert.notEqual(second!.producerId, first!.producerId)
    assert.equal(second!.baseSequence, 0)
    await finish(cluster, producer)
    assert.equal(producer.snapshot().recordsAcked, 1)
  })

  it('counts DUPLICATE_SEQUENCE_NUMBER as acknowledged: the broker already wrote the batch', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    await producer.start()
    await batches(producer, ['a'])
    await until(() => cluster.calls.length === 1, 'the batch')
    cluster.calls[0]!.respond(KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER)
    await producer.flush()
    assert.deepEqual(
      { ...producer.snapshot(), compressCpuSeconds: 0, uncompressedBytes: 0, compressedBytes: 0 },
      {
        recordsAccepted: 1,
        recordsAcked: 1,
        recordsFailed: 0,
        batchesAcked: 1,
        retries: 0,
        compressCpuSeconds: 0,
        uncompressedBytes: 0,
        compressedBytes: 0
      }
    )
    await producer.close()
  })

  it('fails a batch the broker refuses for good, reports it once, and restarts sequences under a new producer id', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((failure) => failures.push(failure))
    await producer.start()
    await batches(producer, ['too large'])
    await until(() => cluster.calls.length === 1, 'the batch')
    cluster.calls[0]!.respond(KafkaErrorCode.MESSAGE_TOO_LARGE)
    await producer.flush()
    assert.equal(failures.length, 1)
    assert.equal(failures[0]!.error.code, ErrorCodes.RECORD_TOO_LARGE)
    assert.match(failures[0]!.error.message, /MESSAGE_TOO_LARGE/)
    assert.equal(producer.snapshot().recordsFailed, 1)
    cluster.autoRespond = true
    await batches(producer, ['next'])
    await producer.flush()
    const next = cluster.calls[1]!.batches[0]!
    assert.equal(next.baseSequence, 0)
    assert.notEqual(next.producerId, cluster.calls[0]!.batches[0]!.producerId)
    await producer.close()
  })

  it('resends a batch refused with MESSAGE_TOO_LARGE in halves, in order, until the large record fails alone', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((failure) => failures.push(failure))
    await producer.start()
    await batches(producer, ['x'])
    await until(() => cluster.calls.length === 1, 'the first batch')
    cluster.calls[0]!.respond(0)
    const big = 'B'.repeat(1000)
    for (const value of ['a', 'b', big, 'c', 'd'])
      await producer.send({ topic: 't', partition: 0, key: null, value: Buffer.from(value) })
    // As a broker whose max.message.bytes only the big record exceeds, and which checks each producer id's sequences.
    const nextSequence = new Map<bigint, number>([[cluster.calls[0]!.batches[0]!.producerId, 1]])
    const answer = (call: ProduceCall): void => {
      const batch = call.batches[0]!
      const expected = nextSequence.get(batch.producerId) ?? 0
      if (batch.values.includes(big)) call.respond(KafkaErrorCode.MESSAGE_TOO_LARGE)
      else if (batch.baseSequence !== expected) call.respond(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
      else {
        nextSequence.set(batch.producerId, expected + batch.values.length)
        call.respond(0)
      }
    }
    let flushed = false
    void producer.flush().then(() => {
      flushed = true
    })
    while (!flushed) {
      await until(() => flushed || cluster.pending().length > 0, 'a produce request or the end of the flush')
      for (const call of cluster.pending()) answer(call)
    }
    // Each batch as first sent: how many times a batch went again (for its sequence, after a backoff) is timing.
    const batchesSent = [
      ...new Set(
        cluster.calls.slice(1).map((call) => call.batches[0]!.values.map((v) => (v === big ? 'BIG' : v)).join(','))
      )
    ]
    assert.deepEqual(
      batchesSent,
      ['a,b,BIG,c,d', 'a,b,BIG', 'c,d', 'a,b', 'BIG'],
      'halves of the refused batch, in its place, until the big record goes alone'
    )
    assert.deepEqual(cluster.log.get('t-0'), ['x', 'a', 'b', 'c', 'd'], 'every other record once, in order')
    assert.equal(failures.length, 1)
    const [failure] = failures
    assert.equal(failure!.error.code, ErrorCodes.RECORD_TOO_LARGE)
    assert.equal(failure!.records, 1)
    assert.equal(failure!.firstRecordIndex, 3, 'the fourth record the partition accepted')
    assert.deepEqual(
      failure!.sent.map((r) => r.value?.toString()),
      [big]
    )
    await producer.close()
  })

  it('retries a batch whose request failed on the connection, with the same sequence', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster)
    await producer.start()
    await batches(producer, ['a'])
    await until(() => cluster.calls.length === 1, 'the batch')
    cluster.calls[0]!.fail(new Error('connection reset'))
    await until(() => cluster.calls.length === 2, 'the retry')
    assert.equal(cluster.calls[1]!.batches[0]!.baseSequence, cluster.calls[0]!.batches[0]!.baseSequence)
    assert.equal(producer.snapshot().retries, 1)
    await finish(cluster, producer)
    assert.deepEqual(cluster.log.get('t-0'), ['a'])
  })

  it('fails a batch with no leader once delivery.timeout.ms has passed, never retrying it forever', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    cluster.leaders.set('t-0', -1)
    const producer = newProducer(cluster, { deliveryTimeoutMs: 20 })
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((failure) => failures.push(failure))
    await producer.start()
    await batches(producer, ['a'])
    await producer.flush()
    assert.equal(failures.length, 1)
    assert.equal(failures[0]!.error.code, ErrorCodes.TIMEOUT)
    assert.equal(cluster.calls.length, 0)
    await producer.close()
  })

  it('without idempotence sends one batch per partition at a time, unsequenced', async () => {
    const cluster = new FakeCluster({ topics: { t: 1 } })
    const producer = newProducer(cluster, { idempotent: false })
    await producer.start()
    assert.equal(cluster.initProducerIdCalls.length, 0)
    await batches(producer, ['a', 'b', 'c'])
    for (let sent = 1; sent <= 3; sent++) {
      await until(() => cluster.calls.length === sent, `batch ${sent}`)
      await settle()
      assert.equal(cluster.calls.length, sent)
      cluster.calls[sent - 1]!.respond(0)
    }
    assert.deepEqual(sequences(cluster.calls), [-1, -1, -1])
    await finish(cluster, producer)
  })

  it('puts the batches of partitions with the same leader in one request, split at max.request.size', async () => {
    const cluster = new FakeCluster({ topics: { t: 3 }, autoRespond: true })
    const producer = newProducer(cluster, { maxRequestSizeBytes: 2000 })
    await producer.start()
    for (const partition of [0, 1, 2])
      await producer.send({ topic: 't', partition, key: null, value: Buffer.alloc(700, 120) })
    await producer.flush()
    // Each batch is ~780 bytes: two fit under 2,000 bytes, the third goes in a second request.
    assert.deepEqual(
      cluster.calls.map((c) => c.batches.map((b) => b.partition)),
      [[0, 1], [2]]
    )
    await producer.close()
  })
})
