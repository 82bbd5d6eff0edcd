// Golden bytes for squeeze's own group requests. Every hex string below was serialized by Kafka 4.1.1's own
// message classes (kafka-clients-4.1.1.jar, MessageUtil.toByteBufferAccessor, run in jshell) from the same
// values the test passes, so the encoders and decoders match what a broker writes and reads, byte for byte.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { consumerGroupDescribeBody, decodeConsumerGroupDescribe } from '../../../lib/kafka/consumer-group-describe.js'
import { decodeHeartbeatResponse, heartbeatBody } from '../../../lib/kafka/consumer-group-heartbeat.js'
import { FlexibleReader } from '../../../lib/kafka/flexible.js'
import { decodeOffsetCommitResponse, offsetCommitBody } from '../../../lib/kafka/offset-commit.js'
import { decodeOffsetFetchResponse, offsetFetchBody } from '../../../lib/kafka/offset-fetch.js'
import { decodeTopicMetadata, topicMetadataBody } from '../../../lib/kafka/topic-ids.js'
import { txnOffsetCommitBody } from '../../../lib/kafka/txn-offset-commit.js'

const TOPIC_ID = 'AAECAwQFBgcICQoLDA0ODw'
const hex = (s: string): Buffer => Buffer.from(s, 'hex')

describe('group request encoders (Kafka 4.1.1 golden bytes)', () => {
  it('ConsumerGroupHeartbeat v1 request, with a non-ASCII topic name and owned partitions', () => {
    const body = heartbeatBody({
      groupId: 'g1',
      memberId: 'm-1',
      memberEpoch: 3,
      rebalanceTimeoutMs: 60000,
      subscribedTopicNames: ['logs', 'métriques'],
      ownedPartitions: [{ topicId: TOPIC_ID, partitions: [0, 2, 5] }]
    })
    assert.equal(
      body.toString('hex'),
      '036731046d2d310000000300000000ea6003056c6f67730b6dc3a974726971756573000002000102030405060708090a0b0c0d0e0f040000000000000002000000050000'
    )
  })

  it('ConsumerGroupHeartbeat v1 responses: an assignment, and a fenced member with none', () => {
    const ok = decodeHeartbeatResponse(
      new FlexibleReader(
        hex('00000000000000046d2d3100000004000003e80102000102030405060708090a0b0c0d0e0f030000000100000003000000')
      )
    )
    assert.deepEqual(ok, {
      errorCode: 0,
      errorMessage: null,
      memberId: 'm-1',
      memberEpoch: 4,
      heartbeatIntervalMs: 1000,
      assignment: [{ topicId: TOPIC_ID, partitions: [1, 3] }]
    })
    const fenced = decodeHeartbeatResponse(new FlexibleReader(hex('00000000006e0766656e63656400ffffffff00000000ff00')))
    assert.deepEqual(fenced, {
      errorCode: 110,
      errorMessage: 'fenced',
      memberId: null,
      memberEpoch: -1,
      heartbeatIntervalMs: 0,
      assignment: null
    })
  })

  it('OffsetCommit v9 request (member epoch as generation, offsets past 2^32) and response', () => {
    const body = offsetCommitBody({
      groupId: 'g1',
      generationIdOrMemberEpoch: 4,
      memberId: 'm-1',
      offsets: [
        { topic: 'logs', partition: 0, offset: 42 },
        { topic: 'logs', partition: 2, offset: 5_000_000_000 },
        { topic: 'métriques', partition: 1, offset: 7 }
      ]
    })
    assert.equal(
      body.toString('hex'),
      '03673100000004046d2d310003056c6f67730300000000000000000000002affffffff000000000002000000012a05f200ffffffff0000000b6dc3a97472697175657302000000010000000000000007ffffffff00000000'
    )
    const errors = decodeOffsetCommitResponse(
      new FlexibleReader(hex('0000000002056c6f67730300000000000000000000020071000000'))
    )
    assert.deepEqual(errors, [
      { topic: 'logs', partition: 0, errorCode: 0 },
      { topic: 'logs', partition: 2, errorCode: 113 }
    ])
  })

  it('OffsetFetch v9 request (member id and epoch, require_stable) and response with a partition that has no offset', () => {
    const body = offsetFetchBody({
      groupId: 'g1',
      memberId: 'm-1',
      memberEpoch: 4,
      partitions: [
        { topic: 'logs', partition: 0 },
        { topic: 'logs', partition: 2 }
      ]
    })
    assert.equal(body.toString('hex'), '02036731046d2d310000000402056c6f677303000000000000000200000100')
    const result = decodeOffsetFetchResponse(
      new FlexibleReader(
        hex(
          '000000000203673102056c6f67730300000000000000000000002affffffff0100000000000002ffffffffffffffffffffffff010000000000000000'
        )
      )
    )
    assert.deepEqual(result, {
      errorCode: 0,
      offsets: [
        { topic: 'logs', partition: 0, offset: 42, errorCode: 0 },
        { topic: 'logs', partition: 2, offset: -1, errorCode: 0 }
      ]
    })
  })

  it('TxnOffsetCommit v3 request with the member id and generation (KIP-447), one without them, and the response', () => {
    const offsets = [
      { topic: 'logs', partition: 0, offset: 42 },
      { topic: 'logs', partition: 2, offset: 5_000_000_000 },
      { topic: 'métriques', partition: 1, offset: 7 }
    ]
    const fenced = txnOffsetCommitBody({
      transactionalId: 'tx-1',
      groupId: 'g1',
      producerId: 5_000_000_000n,
      producerEpoch: 3,
      member: { memberId: 'm-1', generationId: 7 },
      offsets
    })
    assert.equal(
      fenced.toString('hex'),
      '0574782d31036731000000012a05f200000300000007046d2d310003056c6f67730300000000000000000000002affffffff000000000002000000012a05f200ffffffff0000000b6dc3a97472697175657302000000010000000000000007ffffffff00000000'
    )
    // Without a member: generation -1, an empty member id and no instance id, Kafka's defaults.
    const unfenced = txnOffsetCommitBody({
      transactionalId: 'tx-1',
      groupId: 'g1',
      producerId: 1000n,
      producerEpoch: 0,
      offsets: [{ topic: 'logs', partition: 1, offset: 9 }]
    })
    assert.equal(
      unfenced.toString('hex'),
      '0574782d3103673100000000000003e80000ffffffff010002056c6f677302000000010000000000000009ffffffff00000000'
    )
    const errors = decodeOffsetCommitResponse(
      new FlexibleReader(hex('0000000002056c6f67730300000000000000000000020019000000'))
    )
    assert.deepEqual(errors, [
      { topic: 'logs', partition: 0, errorCode: 0 },
      { topic: 'logs', partition: 2, errorCode: 25 }
    ])
  })

  it('Metadata v12 request by name, and the topic id in its response', () => {
    assert.equal(topicMetadataBody(['logs']).toString('hex'), '0200000000000000000000000000000000056c6f677300000000')
    const topics = decodeTopicMetadata(
      new FlexibleReader(
        hex(
          '0000000002000000010a3132372e302e302e31000023840000026300000001020000056c6f6773000102030405060708090a0b0c0d0e0f000300000000000000000001000000000200000001020000000101000000000000010000000100000000020000000102000000010100800000000000'
        )
      )
    )
    assert.deepEqual(topics, [{ name: 'logs', topicId: TOPIC_ID, errorCode: 0, partitions: 2 }])
  })

  it('ConsumerGroupDescribe v0 request and response: members with assignments, and a group that is not of the new protocol', () => {
    assert.equal(consumerGroupDescribeBody(['g1', 'app-é']).toString('hex'), '03036731076170702dc3a90000')
    const groups = decodeConsumerGroupDescribe(
      new FlexibleReader(
        hex(
          '000000000300000003673107537461626c65000000070000000708756e69666f726d03046d2d3100037231000000050c62696c6c696e672d6170700a2f31302e302e302e3702056c6f67730002000102030405060708090a0b0c0d0e0f056c6f67730300000000000000010000010000046d2d3204692d3200000000050873717565657a650a2f31302e302e302e3801056c6f2e2a010002000102030405060708090a0b0c0d0e0f056c6f6773030000000000000001000000800000000000452647726f7570206170702dc3a9206973206e6f74206120636f6e73756d65722067726f75702e076170702dc3a90100000000000000000101800000000000'
        )
      )
    )
    assert.deepEqual(groups, [
      {
        groupId: 'g1',
        errorCode: 0,
        errorMessage: null,
        state: 'Stable',
        members: [
          { memberId: 'm-1', clientId: 'billing-app', clientHost: '/10.0.0.7' },
          { memberId: 'm-2', clientId: 'squeeze', clientHost: '/10.0.0.8' }
        ]
      },
      {
        groupId: 'app-é',
        errorCode: 69,
        errorMessage: 'Group app-é is not a consumer group.',
        state: '',
        members: []
      }
    ])
  })
})
