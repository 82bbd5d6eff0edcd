import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { Admin } from 'kafkajs'
import { PartitionReader, DEFAULT_READER_CONFIG } from '../../../lib/consumer/partition-reader.js'
import { ErrorCodes } from '../../../lib/errors.js'
import type { FetchedPartition } from '../../../lib/kafka/fetch-request.js'
import type { KafkajsCluster } from '../../../lib/kafka/kafkajs-internals.js'
import type { Logger } from '../../../lib/log/logger.js'

// kafkajs's errors as the connection pool throws them: a class name and its own retriable flag.
function kafkajsError(name: string, message: string, retriable: boolean): Error {
  return Object.assign(new Error(message), { name, retriable })
}

const EMPTY_PARTITION: FetchedPartition = {
  topic: 't',
  partition: 0,
  errorCode: 0,
  highWatermark: 0,
  lastStableOffset: 0,
  abortedTransactions: [],
  records: Buffer.alloc(0)
}

/** One empty partition led by broker 1, whose fetches answer from `answers` in turn (an Error is thrown). */
function readerOver(
  answers: Array<Error | FetchedPartition[]>,
  warnings: string[]
): { reader: PartitionReader; fetches: () => number } {
  let fetches = 0
  const cluster = {
    addMultipleTargetTopics: async () => {},
    refreshMetadata: async () => {},
    findTopicPartitionMetadata: () => [{ partitionId: 0, leader: 1 }],
    findBroker: async () => ({
      connectionPool: {
        send: async () => {
          const answer = answers[Math.min(fetches++, answers.length - 1)]
          if (answer instanceof Error) throw answer
          return answer
        }
      }
    })
  } as unknown as KafkajsCluster
  const admin = {
    fetchTopicOffsets: async () => [{ partition: 0, low: '0', high: '0', offset: '0' }]
  } as unknown as Admin
  const log = { warn: (_obj: unknown, msg: string) => warnings.push(msg) } as unknown as Logger
  return {
    reader: new PartitionReader({ ...DEFAULT_READER_CONFIG, topics: ['t'] }, { cluster, admin, log }),
    fetches: () => fetches
  }
}

const handlers = { onBatch: () => {}, onCorruptBatch: () => {} }

it('a fetch that fails for a reason a retry may fix (connection lost, request timeout) is retried until it answers', async () => {
  const warnings: string[] = []
  const { reader, fetches } = readerOver(
    [
      kafkajsError('KafkaJSConnectionClosedError', 'Closed connection', true),
      kafkajsError('KafkaJSRequestTimeoutError', 'Request Fetch(key: 1, version: 4) timed out', true),
      [EMPTY_PARTITION]
    ],
    warnings
  )
  await reader.run(handlers)
  assert.equal(fetches(), 3)
  assert.deepEqual(warnings, ['fetch failed; retrying', 'fetch failed; retrying'])
})

it('a fetch error no retry fixes ends the read with SQUEEZE_ERR_SOURCE and its cause, instead of being retried forever', async () => {
  const controller = new AbortController()
  const refusal = kafkajsError(
    'KafkaJSServerDoesNotSupportApiKey',
    'The Kafka server does not support the requested API version',
    false
  )
  const warnings: string[] = []
  const { reader, fetches } = readerOver([refusal], warnings)
  // The code that swallowed every fetch error would loop; the abort ends it, and run() would then resolve.
  const stopAfterThree = setInterval(() => {
    if (fetches() >= 3) controller.abort()
  }, 10)
  try {
    await assert.rejects(
      reader.run(handlers, controller.signal),
      (err: Error & { code?: string; cause?: unknown }) => err.code === ErrorCodes.SOURCE && err.cause === refusal
    )
  } finally {
    clearInterval(stopAfterThree)
  }
  assert.equal(fetches(), 1)
  assert.deepEqual(warnings, [])
})

it('a partition without a known leader is read once the metadata names one, while the other partitions keep answering', async () => {
  // Before: the round fetched the partitions with a leader and never refreshed the metadata, so a topic created a
  // moment before the reader started (its leader not yet in kafkajs's cache) was skipped for as long as it ran.
  let refreshed = false
  const lagged = new Set<number>()
  const cluster = {
    addMultipleTargetTopics: async () => {},
    refreshMetadata: async () => {
      refreshed = true
    },
    findTopicPartitionMetadata: () => [
      { partitionId: 0, leader: 1 },
      { partitionId: 1, leader: refreshed ? 1 : -1 }
    ],
    findBroker: async () => ({
      // A broker's answer takes a turn of the event loop, so the test's own timer can end a read that never gets there.
      connectionPool: {
        send: () =>
          new Promise((resolve) => setImmediate(() => resolve([EMPTY_PARTITION, { ...EMPTY_PARTITION, partition: 1 }])))
      }
    })
  } as unknown as KafkajsCluster
  const admin = {
    fetchTopicOffsets: async () => [0, 1].map((partition) => ({ partition, low: '0', high: '0', offset: '0' }))
  } as unknown as Admin
  const log = { warn: () => {} } as unknown as Logger
  const controller = new AbortController()
  const reader = new PartitionReader(
    { ...DEFAULT_READER_CONFIG, topics: ['t'], untilEnd: false, maxWaitMs: 10 },
    {
      cluster,
      admin,
      log,
      lag: (_topic, partition) => {
        lagged.add(partition)
        if (lagged.has(1)) controller.abort()
      }
    }
  )
  const stop = setTimeout(() => controller.abort(), 10_000)
  await reader.run(handlers, controller.signal)
  clearTimeout(stop)
  assert.ok(refreshed, 'the reader refreshed the metadata')
  assert.deepEqual([...lagged].sort(), [0, 1], 'both partitions were fetched')
})
