import type { Admin, ITopicConfig } from 'kafkajs'
import { retry } from '../retry.js'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'

/**
 * Creates `topic` if it is missing, with compression.type=producer so the broker keeps each producer's batches
 * as sent (any other value makes the broker recompress, and the comparison would measure the broker's codec).
 */
export async function ensureTopic(admin: Admin, topic: string, partitions: number, replicationFactor = 1): Promise<'created' | 'exists'> {
  const existing = await admin.listTopics()
  if (existing.includes(topic)) return 'exists'
  try {
    await createTopicsAndWait(admin, [{ topic, numPartitions: partitions, replicationFactor, configEntries: [{ name: 'compression.type', value: 'producer' }] }])
  } catch (err) {
    throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `cannot create topic ${topic}: ${errorMessage(err)}`, { cause: err })
  }
  return 'created'
}

/**
 * createTopics, then waits until every partition has a leader. kafkajs's own waitForLeaders gives up when the
 * metadata of a topic created a moment ago still says UNKNOWN_TOPIC_OR_PARTITION; this keeps asking instead.
 */
export async function createTopicsAndWait(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics })
  const names = topics.map((t) => t.topic)
  await retry(async () => {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: names })
    const ready = names.every((name) => {
      const partitions = metadata.find((t) => t.name === name)?.partitions ?? []
      return partitions.length > 0 && partitions.every((p) => p.leader >= 0)
    })
    if (!ready) throw new SqueezeError(ErrorCodes.TIMEOUT, `topics ${names.join(', ')} have no leaders yet`, { retriable: true })
  }, { retries: 30, initialDelayMs: 50, maxDelayMs: 500, shouldRetry: () => true })
}
