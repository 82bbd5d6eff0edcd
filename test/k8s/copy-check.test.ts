import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { countRecord, recordDigest, tallyCopy, type RecordCounts } from './copy-check.js'

function counts(partitions: Record<number, string[]>): RecordCounts {
  const out: RecordCounts = new Map()
  for (const [partition, values] of Object.entries(partitions))
    for (const v of values)
      countRecord(out, Number(partition), recordDigest({ timestamp: 1, key: null, value: Buffer.from(v) }))
  return out
}

describe('copy-check', () => {
  it('a whole copy with a redelivered stretch counts its duplicates and loses nothing', () => {
    const source = counts({ 0: ['a', 'b', 'c'], 1: ['d'] })
    const tally = tallyCopy('t', source, counts({ 0: ['a', 'b', 'b', 'c', 'c'], 1: ['d'] }))
    assert.deepEqual(tally, { topic: 't', records: 6, lost: 0, duplicated: 2, foreign: 0 })
  })

  it('a duplicate does not hide a lost record, nor a record moved to another partition', () => {
    const source = counts({ 0: ['a', 'b'], 1: ['c'] })
    const tally = tallyCopy('t', source, counts({ 0: ['a', 'a', 'c'] }))
    assert.deepEqual(tally, { topic: 't', records: 3, lost: 2, duplicated: 1, foreign: 1 })
  })

  it('records that differ in timestamp or key are different records', () => {
    const value = Buffer.from('v')
    const digests = new Set([
      recordDigest({ timestamp: 1, key: null, value }),
      recordDigest({ timestamp: 2, key: null, value }),
      recordDigest({ timestamp: 1, key: Buffer.from(''), value }),
      recordDigest({ timestamp: 1, key: Buffer.from('v'), value: null })
    ])
    assert.equal(digests.size, 4)
  })
})
