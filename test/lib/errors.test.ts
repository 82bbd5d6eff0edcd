import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import kafkajs from 'kafkajs'
import { isTransient } from '../../lib/errors.js'

const { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs

describe('isTransient', () => {
  it("a refused connection is transient, also once kafkajs's own retries gave up on it (a coordinator's node killed)", () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9', {
      broker: '127.0.0.1:9',
      code: 'ECONNREFUSED'
    })
    assert.equal(isTransient(refused), true)
    assert.equal(isTransient(new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 1, retryTime: 100 })), true)
  })

  it('kafkajs giving up on an error that is not transient stays not transient', () => {
    const denied = new KafkaJSProtocolError(
      Object.assign(new Error('Not authorized to access group'), {
        type: 'GROUP_AUTHORIZATION_FAILED',
        code: 30,
        retriable: false
      })
    )
    assert.equal(isTransient(denied), false)
    assert.equal(isTransient(new KafkaJSNumberOfRetriesExceeded(denied, { retryCount: 1, retryTime: 100 })), false)
    assert.equal(isTransient(new Error('anything else')), false)
    assert.equal(isTransient(null), false)
  })
})
