import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../lib/errors.js'
import { createLogger } from '../../../lib/log/logger.js'
import {
  DEFAULT_PRODUCER_CONFIG,
  Producer,
  type AckedBatch,
  type ProducerConfig
} from '../../../lib/producer/producer.js'
import { FakeCluster, settle, until } from '../../helpers/fake-cluster.js'

const log = createLogger({ level: 'silent', name: 'test' })
const config: ProducerConfig = {
  ...DEFAULT_PRODUCER_CONFIG,
  codec: { codec: 'lz4', level: 1 },
  compressionThreads: 0,
  lingerMs: 60_000
}

describe('producer', () => {
  it('accepts records only between start() and close(), and flush() waits for every acknowledgement', async () => {
    const cluster = new FakeCluster({ topics: { logs: 3 }, autoRespond: true })
    const producer = new Producer(config, { cluster, log })
    await assert.rejects(producer.send({ topic: 'logs', key: null, value: Buffer.from('early') }), {
      code: ErrorCodes.PRODUCER_CLOSED,
      message: /not started/
    })
    await producer.start()
    const acked: AckedBatch[] = []
    producer.onBatchAcked((batch) => acked.push(batch))
    await producer.sendMany(
      Array.from({ length: 300 }, (_, i) => ({
        topic: 'logs',
        key: Buffer.from(`k${i % 7}`),
        value: Buffer.from(`GET /page/${i} 200`)
      }))
    )
    await producer.flush()
    const stats = producer.snapshot()
    assert.equal(stats.recordsAccepted, 300)
    assert.equal(stats.recordsAcked, 300)
    assert.equal(
      acked.reduce((n, b) => n + b.records, 0),
      300
    )
    assert.equal(producer.bufferedBytes, 0)
    const written = [...cluster.log.values()].flat()
    assert.equal(written.length, 300)
    await producer.close()
    await producer.close()
    await assert.rejects(producer.send({ topic: 'logs', key: null, value: null }), {
      code: ErrorCodes.PRODUCER_CLOSED,
      message: /closing/
    })
  })

  it('sendMany() of records in memory lets batches go out and be acknowledged before it returns', async () => {
    const cluster = new FakeCluster({ topics: { logs: 1 }, autoRespond: true })
    const producer = new Producer({ ...config, batchSizeBytes: 4096 }, { cluster, log })
    await producer.start()
    const acked: AckedBatch[] = []
    producer.onBatchAcked((batch) => acked.push(batch))
    // 20 batches, far below buffer.memory: nothing makes intake wait, so only sendMany itself can let the sender run.
    await producer.sendMany(
      Array.from({ length: 800 }, (_, i) => ({
        topic: 'logs',
        key: null,
        value: Buffer.from(`GET /page/${i} 200 ${'x'.repeat(60)}`)
      }))
    )
    assert.ok(acked.length > 0, 'a batch was acknowledged while sendMany ran')
    await producer.flush()
    assert.deepEqual(
      cluster.log.get('logs-0')?.map((v) => v?.toString().split(' ')[1]),
      Array.from({ length: 800 }, (_, i) => `/page/${i}`)
    )
    await producer.close()
  })

  it('refuses a record above max.request.size in send(), before buffering it', async () => {
    const producer = new Producer(
      { ...config, maxRequestSizeBytes: 1024 },
      { cluster: new FakeCluster({ topics: { logs: 1 } }), log }
    )
    await producer.start()
    await assert.rejects(producer.send({ topic: 'logs', key: null, value: Buffer.alloc(2000) }), {
      code: ErrorCodes.RECORD_TOO_LARGE
    })
    assert.equal(producer.bufferedBytes, 0)
    await producer.close()
  })

  it('with a transactional id: send() needs an open transaction, and its batches carry the id and the transactional flag', async () => {
    const cluster = new FakeCluster({ topics: { logs: 1 }, autoRespond: true })
    const producer = new Producer(config, { cluster, log, transactionalId: 'tx-p' })
    await producer.start()
    await assert.rejects(producer.send({ topic: 'logs', key: null, value: Buffer.from('x') }), {
      message: /beginTransaction/
    })
    producer.beginTransaction()
    await producer.send({ topic: 'logs', key: null, value: Buffer.from('x') })
    await producer.commitTransaction()
    assert.equal(cluster.calls[0]!.transactionalId, 'tx-p')
    assert.equal(cluster.calls[0]!.batches[0]!.isTransactional, true)
    assert.deepEqual(
      cluster.coordinatorCalls.map((c) => c.api),
      ['addPartitionsToTxn', 'endTxn']
    )
    await producer.close()
  })

  it('flushAccepted() sends and waits for the records accepted before it only: sendManyTo() goes on into new batches meanwhile', async () => {
    const cluster = new FakeCluster({ topics: { logs: 2 } })
    const producer = new Producer(config, { cluster, log })
    await producer.start()
    const values = (from: number, to: number): Buffer[] =>
      Array.from({ length: to - from }, (_, i) => Buffer.from(`line ${from + i}`))
    await producer.sendManyTo(
      'logs',
      1,
      values(0, 5).map((value) => ({ key: null, value }))
    )
    let flushed = false
    const done = producer.flushAccepted().then(() => (flushed = true))
    await producer.sendManyTo(
      'logs',
      1,
      values(5, 8).map((value) => ({ key: null, value, timestamp: 1_700_000_000_000 }))
    )
    await until(() => cluster.pending().length > 0, 'the batch before the flush on the wire')
    await settle()
    assert.equal(flushed, false, 'waits for the acknowledgement')
    for (const call of cluster.pending()) call.respond(0)
    await done
    assert.deepEqual(cluster.log.get('logs-1'), values(0, 5).map(String))
    const stats = producer.snapshot()
    assert.equal(stats.recordsAccepted, 8)
    assert.equal(stats.recordsAcked, 5, 'the later records wait in their open batch, not flushed')
    const flushing = producer.flush()
    await until(() => cluster.pending().length > 0, 'the later batch on the wire')
    for (const call of cluster.pending()) call.respond(0)
    await flushing
    assert.deepEqual(cluster.log.get('logs-1'), values(0, 8).map(String))
    await assert.rejects(producer.sendManyTo('logs', 2, [{ key: null, value: null }]), {
      code: ErrorCodes.CONFIG_INVALID,
      message: /partition 2 does not exist/
    })
    await producer.close()
  })

  it('whenAcceptedSettled() waits for records still in their open batch: they are not acknowledged until it is sent', async () => {
    const cluster = new FakeCluster({ topics: { logs: 1 } })
    const producer = new Producer(config, { cluster, log })
    await producer.start()
    const records = (from: number, to: number): Array<{ key: null; value: Buffer }> =>
      Array.from({ length: to - from }, (_, i) => ({ key: null, value: Buffer.from(`line ${from + i}`) }))
    await producer.sendManyTo('logs', 0, records(0, 5))
    let settledAt: number | null = null
    const done = producer.whenAcceptedSettled().then(() => (settledAt = producer.snapshot().recordsAcked))
    await settle()
    assert.equal(settledAt, null, 'the open batch (linger.ms far off) holds the records back')
    assert.equal(cluster.pending().length, 0, 'and it is not sent sooner than linger.ms')
    // A flush of what was accepted since sends the batch; the wait ends with its acknowledgement.
    const flushed = producer.flushAccepted()
    await until(() => cluster.pending().length > 0, 'the batch on the wire')
    await settle()
    assert.equal(settledAt, null, 'waits for the acknowledgement')
    for (const call of cluster.pending()) call.respond(0)
    await Promise.all([done, flushed])
    assert.equal(settledAt, 5, 'settled once the five records were acknowledged')
    await producer.close()
  })

  it('without a transactional id, refuses transactions', async () => {
    const producer = new Producer(config, { cluster: new FakeCluster({ topics: {} }), log })
    assert.throws(() => producer.beginTransaction(), { code: ErrorCodes.CONFIG_INVALID })
    await assert.rejects(producer.commitTransaction(), { message: /no open transaction/ })
  })
})
