import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { txnOffsetCommitBody } from '../../../lib/kafka/txn-offset-commit.js'
import { TRANSACTION_COORDINATOR_RETRY, Transactions } from '../../../lib/producer/transactions.js'
import { FakeCluster } from '../../helpers/fake-cluster.js'

function setup() {
  const cluster = new FakeCluster({ topics: { t: 2 } })
  const transactions = new Transactions('tx-1', cluster, { producerId: 1000n, producerEpoch: 3 })
  const flushes: number[] = []
  const flush = async (): Promise<void> => {
    flushes.push(flushes.length)
  }
  return { cluster, transactions, flush, flushes }
}

const ids = { transactionalId: 'tx-1', producerId: '1000', producerEpoch: 3 }

describe('transactions', () => {
  it('adds each partition to the transaction once, before its first batch, and commits with EndTxn', async () => {
    const { cluster, transactions, flush, flushes } = setup()
    transactions.begin()
    await transactions.addPartitions([{ queue: { topic: 't', partition: 0 } }, { queue: { topic: 't', partition: 1 } }])
    await transactions.addPartitions([{ queue: { topic: 't', partition: 1 } }])
    await transactions.commit(flush)
    assert.equal(flushes.length, 1)
    assert.deepEqual(cluster.coordinatorCalls, [
      { api: 'addPartitionsToTxn', args: { ...ids, topics: [{ topic: 't', partitions: [0, 1] }] } },
      { api: 'endTxn', args: { ...ids, transactionResult: true } }
    ])
    assert.equal(transactions.isOpen, false)
    // The next transaction adds its partitions again.
    transactions.begin()
    await transactions.addPartitions([{ queue: { topic: 't', partition: 1 } }])
    assert.equal(cluster.coordinatorCalls.length, 3)
  })

  it('sends no EndTxn for a transaction that wrote nothing: the coordinator never opened it', async () => {
    const { cluster, transactions, flush } = setup()
    transactions.begin()
    await transactions.commit(flush)
    transactions.begin()
    await transactions.abort(flush)
    assert.deepEqual(cluster.coordinatorCalls, [])
  })

  it("aborts instead of committing when a batch failed, and throws that batch's error", async () => {
    const { cluster, transactions, flush } = setup()
    transactions.begin()
    await transactions.addPartitions([{ queue: { topic: 't', partition: 0 } }])
    const first = new SqueezeError(ErrorCodes.RECORD_TOO_LARGE, 'first')
    transactions.batchFailed(first)
    transactions.batchFailed(new SqueezeError(ErrorCodes.PRODUCE_FAILED, 'second'))
    await assert.rejects(transactions.commit(flush), (err) => err === first)
    assert.deepEqual(cluster.coordinatorCalls.at(-1), { api: 'endTxn', args: { ...ids, transactionResult: false } })
    transactions.begin()
    await transactions.addPartitions([{ queue: { topic: 't', partition: 0 } }])
    await transactions.commit(flush)
    assert.deepEqual(
      cluster.coordinatorCalls.at(-1),
      { api: 'endTxn', args: { ...ids, transactionResult: true } },
      'a new transaction starts clean'
    )
  })

  it('adds the consumer group once and commits its offsets inside the transaction', async () => {
    const { cluster, transactions, flush } = setup()
    transactions.begin()
    await transactions.sendOffsets('group-a', [
      { topic: 'src', partition: 0, offset: 10 },
      { topic: 'src', partition: 1, offset: 7 }
    ])
    await transactions.sendOffsets('group-a', [{ topic: 'src', partition: 0, offset: 12 }])
    await transactions.commit(flush)
    assert.deepEqual(
      cluster.coordinatorCalls.map((c) => c.api),
      ['addOffsetsToTxn', 'txnOffsetCommit', 'txnOffsetCommit', 'endTxn']
    )
    const body = txnOffsetCommitBody({
      transactionalId: 'tx-1',
      groupId: 'group-a',
      producerId: 1000n,
      producerEpoch: 3,
      offsets: [
        { topic: 'src', partition: 0, offset: 10 },
        { topic: 'src', partition: 1, offset: 7 }
      ]
    })
    assert.deepEqual(cluster.coordinatorCalls[1]!.args, { version: 3, body: body.toString('hex') })
  })

  it('KIP-447: the offsets carry the member id and epoch; a commit refused as fenced fails with GROUP_FENCED, not retried', async () => {
    const { cluster, transactions } = setup()
    transactions.begin()
    const member = { memberId: 'm-1', generationId: 7 }
    await transactions.sendOffsets('group-a', [{ topic: 'src', partition: 0, offset: 10 }], member)
    const body = txnOffsetCommitBody({
      transactionalId: 'tx-1',
      groupId: 'group-a',
      producerId: 1000n,
      producerEpoch: 3,
      member,
      offsets: [{ topic: 'src', partition: 0, offset: 10 }]
    })
    assert.deepEqual(cluster.coordinatorCalls[1]!.args, { version: 3, body: body.toString('hex') })
    for (const code of [25, 110, 22]) {
      cluster.txnOffsetCommitRefusals.push(code)
      await assert.rejects(transactions.sendOffsets('group-a', [{ topic: 'src', partition: 0, offset: 11 }], member), {
        code: ErrorCodes.GROUP_FENCED
      })
    }
    // A coordinator still loading is retried.
    cluster.txnOffsetCommitRefusals.push(14)
    await transactions.sendOffsets('group-a', [{ topic: 'src', partition: 0, offset: 11 }], member)
    assert.equal(cluster.coordinatorCalls.filter((c) => c.api === 'txnOffsetCommit').length, 6)
  })

  it('retries AddOffsetsToTxn while the coordinator still finishes the previous transaction (CONCURRENT_TRANSACTIONS)', async () => {
    const { cluster, transactions, flush } = setup()
    // kafkajs raises it as a KafkaJSProtocolError marked retriable.
    const concurrent = Object.assign(new Error('another concurrent operation on the same transaction was ongoing'), {
      name: 'KafkaJSProtocolError',
      type: 'CONCURRENT_TRANSACTIONS',
      retriable: true
    })
    cluster.coordinatorErrors.addOffsetsToTxn = [concurrent]
    transactions.begin()
    await transactions.sendOffsets('group-a', [{ topic: 'src', partition: 0, offset: 1 }])
    await transactions.commit(flush)
    assert.deepEqual(
      cluster.coordinatorCalls.map((c) => c.api),
      ['addOffsetsToTxn', 'addOffsetsToTxn', 'txnOffsetCommit', 'endTxn']
    )
  })

  it("keeps retrying EndTxn while the coordinator's node is down, past ten tries, until its deadline", async () => {
    const cluster = new FakeCluster({ topics: { t: 2 } })
    // The default's deadline and error rule, with millisecond waits.
    const transactions = new Transactions(
      'tx-1',
      cluster,
      { producerId: 1000n, producerEpoch: 3 },
      { ...TRANSACTION_COORDINATOR_RETRY, initialDelayMs: 1, maxDelayMs: 2 }
    )
    const refused = Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9'), {
      name: 'KafkaJSConnectionError',
      retriable: true
    })
    cluster.coordinatorErrors.endTxn = Array.from({ length: 15 }, () => refused)
    transactions.begin()
    await transactions.sendOffsets('group-a', [{ topic: 'src', partition: 0, offset: 1 }])
    await transactions.commit(async () => undefined)
    assert.equal(cluster.coordinatorCalls.filter((c) => c.api === 'endTxn').length, 16)
  })

  it('refuses a second begin, and commit, abort or offsets outside a transaction', async () => {
    const { transactions, flush } = setup()
    await assert.rejects(transactions.commit(flush), {
      code: ErrorCodes.PRODUCE_FAILED,
      message: /no open transaction/
    })
    await assert.rejects(transactions.abort(flush), { code: ErrorCodes.PRODUCE_FAILED })
    await assert.rejects(transactions.sendOffsets('g', []), { code: ErrorCodes.PRODUCE_FAILED })
    transactions.begin()
    assert.throws(() => transactions.begin(), { message: /already open/ })
  })
})
