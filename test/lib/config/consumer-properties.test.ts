import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { copierGroupProperties } from '../../../lib/config/consumer-properties.js'
import { ErrorCodes } from '../../../lib/errors.js'

describe("a copier's -X settings", () => {
  it('split into its group settings (validated) and its producer settings', () => {
    const { group, producer } = copierGroupProperties({
      'group.protocol': 'classic',
      'max.poll.interval.ms': '60000',
      'linger.ms': '5'
    })
    assert.deepEqual(group, { 'group.protocol': 'classic', 'max.poll.interval.ms': 60000 })
    assert.deepEqual(producer, { 'linger.ms': '5' })
  })

  it('refuse a group protocol Kafka does not have, and point the settings the copier has flags for at the flag', () => {
    assert.throws(() => copierGroupProperties({ 'group.protocol': 'streams' }), {
      code: ErrorCodes.CONFIG_INVALID,
      message: /group\.protocol/
    })
    assert.throws(() => copierGroupProperties({ 'session.timeout.ms': '1000' }), {
      code: ErrorCodes.CONFIG_INVALID,
      message: /--session-timeout-ms/
    })
    assert.throws(() => copierGroupProperties({ 'auto.commit.interval.ms': '100' }), {
      code: ErrorCodes.CONFIG_INVALID,
      message: /--commit-interval-ms/
    })
  })
})
