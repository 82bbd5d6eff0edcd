import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { rangeAssign } from '../../../lib/group/classic-membership.js'

const ranges = (assignment: Map<string, Array<{ topic: string; partition: number }>>): Record<string, string[]> =>
  Object.fromEntries([...assignment].map(([member, tps]) => [member, tps.map((tp) => `${tp.topic}-${tp.partition}`)]))

describe('range assignment (classic protocol)', () => {
  it('gives members sorted by id consecutive ranges, the first ones one partition more, per topic', () => {
    const members = [{ memberId: 'c', topics: ['logs'] }, { memberId: 'a', topics: ['logs', 'dns'] }, { memberId: 'b', topics: ['logs'] }]
    assert.deepEqual(ranges(rangeAssign(members, new Map([['logs', 7], ['dns', 2]]))), {
      c: ['logs-5', 'logs-6'],
      a: ['logs-0', 'logs-1', 'logs-2', 'dns-0', 'dns-1'],
      b: ['logs-3', 'logs-4']
    })
  })

  it('leaves members beyond the partition count without partitions', () => {
    const members = ['m1', 'm2', 'm3'].map((memberId) => ({ memberId, topics: ['logs'] }))
    assert.deepEqual(ranges(rangeAssign(members, new Map([['logs', 2]]))), { m1: ['logs-0'], m2: ['logs-1'], m3: [] })
  })
})
