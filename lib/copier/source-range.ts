import type { Admin } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage, isTransient } from '../errors.js'
import { retry } from '../retry.js'

/** Where a source partition starts and ends. */
export interface PartitionRange {
  readonly low: number
  readonly high: number
}

/** The source's partitions with their first and next offsets: --until-end copies up to the latter. */
export async function fetchSourceRange(admin: Admin, sourceTopic: string): Promise<Map<number, PartitionRange>> {
  const offsets = await retry(
    async () => {
      const { topics } = await admin.fetchTopicMetadata({ topics: [sourceTopic] })
      const partitions = topics[0]?.partitions.length ?? 0
      const answer = await admin.fetchTopicOffsets(sourceTopic)
      // kafkajs answers from its metadata cache, and [] when a concurrent refresh left the topic out: with
      // --until-end that read as an empty source and the copy ended at once, having copied nothing.
      if (partitions === 0 || answer.length !== partitions) {
        const message = `offsets for ${answer.length} of ${partitions} partitions of ${sourceTopic}`
        throw new SqueezeError(ErrorCodes.SOURCE, message, { retriable: true })
      }
      return answer
    },
    { retries: 10, initialDelayMs: 100, maxDelayMs: 1000, shouldRetry: isTransient }
  ).catch((err: unknown) => {
    throw new SqueezeError(ErrorCodes.SOURCE, `cannot read source topic ${sourceTopic}: ${errorMessage(err)}`, {
      cause: err
    })
  })
  return new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]))
}
