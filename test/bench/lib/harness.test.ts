import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { roundOrder } from '../../../bench/lib/harness.js'

describe('bench rounds', () => {
  it('roundOrder runs every peer once per round, and each one first in turn', () => {
    const peers = ['squeeze', 'rsyslog', 'kcat'] as const
    const rounds = Array.from({ length: 6 }, (_, round) => roundOrder(peers, round))
    for (const order of rounds) assert.deepEqual([...order].sort(), [...peers].sort())
    assert.deepEqual(
      rounds.map((order) => order[0]),
      ['squeeze', 'rsyslog', 'kcat', 'squeeze', 'rsyslog', 'kcat']
    )
    assert.deepEqual(rounds[1], ['rsyslog', 'kcat', 'squeeze'], 'the order is kept, rotated')
    assert.deepEqual(roundOrder([], 3), [])
  })
})
