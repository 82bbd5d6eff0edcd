import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bytesAllReplicas, bytesPerReplica } from '../../../lib/kafka/describe-log-dirs.js'

// Two topics on three brokers, replication factor 3; the follower of b-1 on broker 3 is 100 bytes behind.
const SIZES = [
  { topic: 'a', partition: 0, brokerId: 1, logDir: '/d1', sizeBytes: 1000 },
  { topic: 'a', partition: 0, brokerId: 2, logDir: '/d2', sizeBytes: 1000 },
  { topic: 'a', partition: 0, brokerId: 3, logDir: '/d3', sizeBytes: 1000 },
  { topic: 'a', partition: 1, brokerId: 1, logDir: '/d1', sizeBytes: 500 },
  { topic: 'a', partition: 1, brokerId: 2, logDir: '/d2', sizeBytes: 500 },
  { topic: 'a', partition: 1, brokerId: 3, logDir: '/d3', sizeBytes: 500 },
  { topic: 'b', partition: 1, brokerId: 1, logDir: '/d1', sizeBytes: 70 },
  { topic: 'b', partition: 1, brokerId: 2, logDir: '/d2', sizeBytes: 70 },
  { topic: 'b', partition: 1, brokerId: 3, logDir: '/d3', sizeBytes: 0 }
]

describe('stored bytes from DescribeLogDirs', () => {
  it('per replica: each partition once, at its most caught-up replica; partitions of different topics are not merged', () => {
    assert.equal(bytesPerReplica(SIZES), 1000 + 500 + 70)
  })

  it('all replicas: every replica on every broker', () => {
    assert.equal(bytesAllReplicas(SIZES), 3 * 1000 + 3 * 500 + 70 + 70)
  })

  it('one broker, replication factor 1: both are the same', () => {
    const single = SIZES.filter((s) => s.brokerId === 1)
    assert.equal(bytesPerReplica(single), 1570)
    assert.equal(bytesAllReplicas(single), 1570)
  })
})
