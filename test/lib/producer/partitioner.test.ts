import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { murmur2, partitionForKey, StickyPartitioner } from '../../../lib/producer/partitioner.js'

describe('murmur2 partitioning', () => {
  it('matches the Java client for its own test vectors (org.apache.kafka.common.utils.UtilsTest)', () => {
    const cases: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107]
    ]
    for (const [key, expected] of cases) assert.equal(murmur2(Buffer.from(key)), expected, key)
  })

  it('spreads keys over every partition and is stable', () => {
    const seen = new Set<number>()
    for (let i = 0; i < 200; i++) seen.add(partitionForKey(Buffer.from(`host-${i}`), 6))
    assert.equal(seen.size, 6)
    assert.equal(partitionForKey(Buffer.from('host-1'), 6), partitionForKey(Buffer.from('host-1'), 6))
  })

  it('sticky partitioning keeps one partition until the batch closes, then moves', () => {
    let n = 0
    const sticky = new StickyPartitioner(() => [0.1, 0.9, 0.5][n++ % 3] as number)
    const first = sticky.partition('t', 4)
    assert.equal(sticky.partition('t', 4), first)
    sticky.batchClosed('t', first, 4)
    const second = sticky.partition('t', 4)
    assert.notEqual(second, first)
  })
})
