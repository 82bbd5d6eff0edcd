import type { Admin } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'

/**
 * Creates `topic` if it is missing, with compression.type=producer so the broker keeps each producer's batches
 * as sent (any other value makes the broker recompress, and the comparison would measure the broker's codec).
 */
export async function ensureTopic(admin: Admin, topic: string, partitions: number, replicationFactor = 1): Promise<'created' | 'exists'> {
  const existing = await admin.listTopics()
  if (existing.includes(topic)) return 'exists'
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: partitions, replicationFactor, configEntries: [{ name: 'compression.type', value: 'producer' }] }]
    })
  } catch (err) {
    throw new SqueezeError(ErrorCodes.PRODUCE_FAILED, `cannot create topic ${topic}: ${errorMessage(err)}`, { cause: err })
  }
  return 'created'
}
