import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KafkaErrorCode } from '../../../lib/kafka/error-codes.js'
import { createLogger } from '../../../lib/log/logger.js'
import { Idempotence } from '../../../lib/producer/idempotence.js'
import {
  newPartitionQueue,
  newPendingBatch,
  type PartitionQueue,
  type ReadyBatch
} from '../../../lib/producer/partition-queue.js'
import { codecCache } from '../../../lib/codecs/index.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'
import { FakeCluster } from '../../helpers/fake-cluster.js'

const NONE = { codec: 'none', level: null } as const

const log = createLogger({ level: 'silent', name: 'test' })
const none = codecCache()({ codec: 'none', level: null })

function setup(options: { idempotent?: boolean; maxInFlight?: number; transactionalId?: string } = {}) {
  const cluster = new FakeCluster({ topics: { t: 1 } })
  const queues: PartitionQueue[] = [newPartitionQueue('t', 0)]
  const retries: number[] = []
  const idempotence = new Idempotence(
    { idempotent: options.idempotent ?? true, maxInFlightPerPartition: options.maxInFlight ?? 5, retryBackoffMs: 7 },
    {
      cluster,
      log,
      retryAfter: (delayMs) => retries.push(delayMs),
      ...(options.transactionalId === undefined ? {} : { transactionalId: options.transactionalId })
    },
    queues
  )
  return { cluster, queue: queues[0]!, idempotence, retries }
}

function readyBatch(records: number): ReadyBatch {
  const sealed = buildBatch(
    Array.from({ length: records }, (_, i) => ({ key: null, value: Buffer.from(`r${i}`) })),
    none
  )
  return { ...newPendingBatch(records, 0, sealed.bytes.length, 0, NONE), sealed }
}

describe('idempotence', () => {
  it('gets a producer id from any broker, or from the transaction coordinator for a transactional id', async () => {
    const plain = setup()
    await plain.idempotence.init()
    assert.deepEqual(plain.cluster.initProducerIdCalls, [{ via: 'controller' }])
    assert.equal(plain.idempotence.producerId, 1000n)
    const transactional = setup({ transactionalId: 'tx-1' })
    await transactional.idempotence.init()
    assert.deepEqual(transactional.cluster.initProducerIdCalls, [{ transactionalId: 'tx-1', via: 'coordinator' }])
  })

  it('stamps consecutive sequence ranges once per producer id, wrapping at 2^31, and again after a new id', async () => {
    const { idempotence, queue } = setup()
    await idempotence.init()
    const a = readyBatch(3)
    const b = readyBatch(2)
    idempotence.stamp(queue, a)
    idempotence.stamp(queue, b)
    idempotence.stamp(queue, a) // a resend keeps its sequences
    assert.deepEqual(
      [readBatch(a.sealed.bytes).baseSequence, readBatch(b.sealed.bytes).baseSequence, queue.nextSequence],
      [0, 3, 5]
    )
    assert.equal(readBatch(a.sealed.bytes, { verifyCrc: true }).producerId, 1000n)
    await idempotence.init()
    assert.equal(queue.nextSequence, 0)
    idempotence.stamp(queue, b)
    const restamped = readBatch(b.sealed.bytes, { verifyCrc: true })
    assert.deepEqual([restamped.producerId, restamped.baseSequence], [1001n, 0])
    queue.nextSequence = 2 ** 31 - 1
    idempotence.stamp(queue, readyBatch(2))
    assert.equal(queue.nextSequence, 1)
  })

  it('stamps no producer id or sequence without idempotence', () => {
    const { idempotence, queue } = setup({ idempotent: false })
    const batch = readyBatch(1)
    idempotence.stamp(queue, batch)
    const read = readBatch(batch.sealed.bytes, { verifyCrc: true })
    assert.deepEqual([read.producerId, read.baseSequence, idempotence.sequenced], [-1n, -1, false])
  })

  it('allows one batch in flight until the broker confirmed a sequence, then max.in.flight (at most 5); one without idempotence or in a transaction', async () => {
    const { idempotence, queue } = setup({ maxInFlight: 9 })
    await idempotence.init()
    assert.equal(idempotence.inFlightLimit(queue), 1)
    const batch = readyBatch(1)
    idempotence.stamp(queue, batch)
    idempotence.acknowledged(queue, batch)
    assert.equal(idempotence.inFlightLimit(queue), 5)
    await idempotence.init()
    assert.equal(idempotence.inFlightLimit(queue), 1, 'a new producer id starts unconfirmed')
    for (const other of [setup({ idempotent: false }), setup({ transactionalId: 'tx' })]) {
      other.queue.sequenceConfirmed = true
      assert.equal(other.idempotence.inFlightLimit(other.queue), 1)
    }
  })

  it('holds a partition that must resend until all its batches in flight are back', () => {
    const { idempotence, queue } = setup()
    queue.needsResend = true
    queue.inFlight = 2
    assert.equal(idempotence.mayResume(queue), false)
    queue.inFlight = 0
    assert.equal(idempotence.mayResume(queue), true)
    assert.equal(queue.needsResend, false)
  })

  it('retries an out-of-order batch behind the head under the same id; needs a new id for a refused head or an unknown producer id', async () => {
    const { idempotence, queue } = setup()
    const head = newPendingBatch(1, 0, 0, 0, NONE)
    const behind = newPendingBatch(1, 0, 0, 0, NONE)
    queue.queue.push(head, behind)
    assert.equal(idempotence.sequenceRefused(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, queue, behind), true)
    assert.equal(idempotence.stale, false)
    assert.equal(idempotence.sequenceRefused(KafkaErrorCode.NOT_LEADER_FOR_PARTITION, queue, head), false)
    assert.equal(idempotence.sequenceRefused(KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, queue, head), true)
    assert.equal(idempotence.stale, true)
    const fresh = setup()
    assert.equal(fresh.idempotence.sequenceRefused(KafkaErrorCode.UNKNOWN_PRODUCER_ID, fresh.queue, head), true)
    assert.equal(fresh.idempotence.stale, true)
    const transactional = setup({ transactionalId: 'tx' })
    assert.equal(
      transactional.idempotence.sequenceRefused(KafkaErrorCode.UNKNOWN_PRODUCER_ID, transactional.queue, head),
      false
    )
  })

  it('renews a stale producer id only with nothing in flight, and asks for a retry when InitProducerId fails', async () => {
    const { idempotence, cluster, retries } = setup()
    await idempotence.init()
    const sent = newPendingBatch(1, 0, 0, 0, NONE)
    sent.stampedGeneration = idempotence.generation
    idempotence.failed(sent)
    assert.equal(idempotence.stale, true)
    assert.equal(await idempotence.renew(1), false)
    assert.equal(cluster.initProducerIdCalls.length, 1)
    cluster.initProducerIdErrors.push(new Error('not the coordinator'))
    assert.equal(await idempotence.renew(0), false)
    assert.deepEqual(retries, [7])
    assert.equal(await idempotence.renew(0), true)
    assert.equal(idempotence.producerId, 1001n)
    assert.equal(idempotence.stale, false)
  })

  it("gives a split batch's sequences to its halves, unless a later batch took sequences after it: then a new id", async () => {
    const { idempotence, queue } = setup()
    await idempotence.init()
    const [before, refused, after] = [readyBatch(1), readyBatch(4), readyBatch(2)]
    queue.queue.push(before, refused, after)
    idempotence.stamp(queue, before)
    idempotence.stamp(queue, refused)
    idempotence.replaced(queue, refused)
    assert.equal(queue.nextSequence, 1, 'the halves start where the refused batch started')
    assert.equal(idempotence.stale, false)
    idempotence.stamp(queue, refused)
    idempotence.stamp(queue, after)
    idempotence.replaced(queue, refused)
    assert.equal(
      idempotence.stale,
      true,
      'the batch after it holds sequences 5-6: only a new producer id renumbers them in order'
    )
  })

  it('does not renew for a failed batch that was never sent', () => {
    const { idempotence } = setup()
    idempotence.failed(newPendingBatch(1, 0, 0, 0, NONE))
    assert.equal(idempotence.stale, false)
  })
})
