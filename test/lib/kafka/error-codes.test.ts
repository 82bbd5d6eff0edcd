import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  KafkaErrorCode,
  describeKafkaError,
  isRetriableKafkaError,
  kafkaError
} from '../../../lib/kafka/error-codes.js'

describe('Kafka error codes', () => {
  it('names the codes the producer acts on', () => {
    assert.deepEqual(
      [
        KafkaErrorCode.NONE,
        KafkaErrorCode.MESSAGE_TOO_LARGE,
        KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER,
        KafkaErrorCode.UNKNOWN_PRODUCER_ID
      ],
      [0, 10, 45, 46, 59]
    )
  })

  it('says which errors are worth retrying: leadership and availability yes, size, authorization and sequence errors no', () => {
    for (const code of [
      KafkaErrorCode.NOT_LEADER_FOR_PARTITION,
      KafkaErrorCode.LEADER_NOT_AVAILABLE,
      KafkaErrorCode.REQUEST_TIMED_OUT,
      KafkaErrorCode.NOT_ENOUGH_REPLICAS,
      KafkaErrorCode.CONCURRENT_TRANSACTIONS
    ]) {
      assert.equal(isRetriableKafkaError(code), true, kafkaError(code).type)
    }
    for (const code of [
      KafkaErrorCode.MESSAGE_TOO_LARGE,
      KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED,
      KafkaErrorCode.INVALID_TIMESTAMP,
      KafkaErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
      KafkaErrorCode.INVALID_PRODUCER_EPOCH
    ]) {
      assert.equal(isRetriableKafkaError(code), false, kafkaError(code).type)
    }
  })

  it('reports a code it does not know as unknown and not retriable', () => {
    assert.equal(isRetriableKafkaError(9999), false)
    assert.equal(describeKafkaError(9999), 'UNKNOWN: unknown Kafka error code 9999')
    assert.match(describeKafkaError(KafkaErrorCode.MESSAGE_TOO_LARGE), /^MESSAGE_TOO_LARGE: /)
  })
})
