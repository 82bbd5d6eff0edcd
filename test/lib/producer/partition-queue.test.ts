import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isReady, newPartitionQueue, newPendingBatch, removeBatch } from '../../../lib/producer/partition-queue.js'

const NONE = { codec: 'none', level: null } as const

describe('partition queue', () => {
  it('removes an answered batch from the head or, when answered out of order, from the middle; once only', () => {
    const queue = newPartitionQueue('t', 3)
    const [a, b, c] = [
      newPendingBatch(1, 0, 10, 0, NONE),
      newPendingBatch(2, 1, 10, 0, NONE),
      newPendingBatch(3, 3, 10, 0, NONE)
    ]
    queue.queue.push(a, b, c)
    assert.equal(removeBatch(queue, b), true)
    assert.deepEqual(queue.queue, [a, c])
    assert.equal(removeBatch(queue, a), true)
    assert.equal(removeBatch(queue, a), false, 'a batch already settled is not settled twice')
    assert.deepEqual(queue.queue, [c])
  })

  it('starts a batch unsealed, unsent and unstamped', () => {
    const batch = newPendingBatch(5, 7, 1024, 42, NONE)
    assert.equal(isReady(batch), false)
    assert.deepEqual(
      { ...batch },
      {
        records: 5,
        firstIndex: 7,
        spec: NONE,
        inFlight: false,
        sealed: null,
        closedAt: 42,
        reserved: 1024,
        attempts: 0,
        retryAt: 0,
        stampedGeneration: -1
      }
    )
  })
})
