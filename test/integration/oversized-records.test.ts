import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { SqueezeError } from '../../lib/errors.js'
import type { DeliveryFailure } from '../../lib/producer/producer.js'
import { useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()

function small(label: string, i: number): { key: null; value: Buffer } {
  return { key: null, value: Buffer.from(`${label}-${i} GET /index.html 200 512 "Mozilla/5.0"`) }
}

async function values(topic: string): Promise<string[]> {
  const batches = await kafka.readAll([topic])
  return batches.flatMap(({ batch }) => batch.records.map((r) => r.value?.toString() ?? '<null>'))
}

describe('records larger than the broker or the producer accepts', () => {
  it('a 50 KB record on a topic with max.message.bytes=10000: its batch fails once with RECORD_TOO_LARGE; records around it arrive', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1, configs: { 'max.message.bytes': '10000' } })
    // batch.size 8000: the big record closes the open batch and travels alone, as it would in production.
    const producer = await kafka.startProducer({ codec: parseCodecSpec('none'), lingerMs: 5, batchSizeBytes: 8000 })
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((f) => failures.push(f))

    for (let i = 0; i < 20; i++) await producer.send({ topic, ...small('before', i) })
    await producer.send({ topic, key: null, value: Buffer.alloc(50 * 1024, 0x61) })
    for (let i = 0; i < 20; i++) await producer.send({ topic, ...small('after', i) })
    await producer.flush() // resolves: the rejected batch is not retried forever

    const stats = producer.snapshot()
    assert.equal(stats.recordsFailed, 1)
    assert.equal(stats.recordsAcked, 40)
    // The big batch is not retried (flush resolved, one failure). The batch sent right behind it, already in
    // flight with the next sequence number, is answered OUT_OF_ORDER_SEQUENCE and resent once under a new epoch.
    assert.ok(stats.retries <= 1, `at most the batch behind it is resent, got ${stats.retries} retries`)
    assert.equal(failures.length, 1)
    const [failure] = failures
    assert.ok(failure !== undefined && failure.error instanceof SqueezeError)
    assert.equal(failure.error.code, 'SQUEEZE_ERR_RECORD_TOO_LARGE')
    assert.equal(failure.records, 1)
    assert.equal(failure.topic, topic)
    assert.match(failure.error.message, /broker rejected a batch of 1 records .*(MESSAGE_TOO_LARGE|too large)/i)

    const expected = [
      ...Array.from({ length: 20 }, (_, i) => small('before', i).value.toString()),
      ...Array.from({ length: 20 }, (_, i) => small('after', i).value.toString())
    ]
    assert.deepEqual(await values(topic), expected, 'every other record arrived, in order, once')

    // The producer keeps working after the rejection (idempotent producers bump their epoch).
    await producer.send({ topic, ...small('later', 0) })
    await producer.flush()
    assert.equal(producer.snapshot().recordsAcked, 41)
    assert.equal(producer.snapshot().recordsFailed, 1)
  })

  it('a 50 KB record inside a batch of small ones on max.message.bytes=10000: the batch is split until only that record fails', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1, configs: { 'max.message.bytes': '10000' } })
    // Default batch.size (1 MiB) and a long linger: all 41 records share one batch, which the broker refuses whole.
    const producer = await kafka.startProducer({ codec: parseCodecSpec('none'), lingerMs: 200 })
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((f) => failures.push(f))

    for (let i = 0; i < 20; i++) await producer.send({ topic, ...small('before', i) })
    await producer.send({
      topic,
      key: Buffer.from('big'),
      value: Buffer.alloc(50 * 1024, 0x61),
      headers: [{ key: 'h', value: Buffer.from('v') }]
    })
    for (let i = 0; i < 20; i++) await producer.send({ topic, ...small('after', i) })
    await producer.flush()

    assert.equal(producer.snapshot().recordsFailed, 1)
    assert.equal(producer.snapshot().recordsAcked, 40)
    assert.equal(failures.length, 1)
    const [failure] = failures
    assert.ok(failure !== undefined)
    assert.equal(failure.error.code, 'SQUEEZE_ERR_RECORD_TOO_LARGE')
    assert.equal(failure.records, 1)
    assert.equal(failure.firstRecordIndex, 20, 'the 21st record the partition accepted')
    assert.equal(failure.sent.length, 1)
    assert.equal(failure.sent[0]?.key?.toString(), 'big')
    assert.deepEqual(failure.sent[0]?.value, Buffer.alloc(50 * 1024, 0x61))
    assert.deepEqual(
      failure.sent[0]?.headers.map((h) => [h.key, h.value?.toString()]),
      [['h', 'v']]
    )

    const expected = [
      ...Array.from({ length: 20 }, (_, i) => small('before', i).value.toString()),
      ...Array.from({ length: 20 }, (_, i) => small('after', i).value.toString())
    ]
    assert.deepEqual(await values(topic), expected, 'every other record arrived, in order, once')
  })

  it('a record larger than max.request.size is refused by send() with RECORD_TOO_LARGE and never buffered', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    const producer = await kafka.startProducer({ codec: parseCodecSpec('zstd:3'), lingerMs: 5 })
    await producer.send({ topic, ...small('before', 0) })
    await assert.rejects(
      producer.send({ topic, key: null, value: Buffer.alloc(1536 * 1024, 0x62) }),
      (err: unknown) =>
        err instanceof SqueezeError &&
        err.code === 'SQUEEZE_ERR_RECORD_TOO_LARGE' &&
        /exceeds max\.request\.size 1048576/.test(err.message)
    )
    await producer.send({ topic, ...small('after', 0) })
    await producer.flush()
    const stats = producer.snapshot()
    assert.equal(stats.recordsAccepted, 2)
    assert.equal(stats.recordsAcked, 2)
    assert.equal(stats.recordsFailed, 0)
    assert.deepEqual(await values(topic), [small('before', 0).value.toString(), small('after', 0).value.toString()])
  })
})
