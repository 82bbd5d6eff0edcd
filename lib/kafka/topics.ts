import type { Admin, ITopicConfig } from 'kafkajs'
import { retry } from '../retry.js'
import { ErrorCodes, SqueezeError, errorCode, errorMessage, isTransient } from '../errors.js'

/**
 * Replication factor -1 asks the broker for its default.replication.factor (KIP-464). The broker honours it on
 * every CreateTopics version kafkajs sends (v3 with Kafka 4.x), so a cluster's own rule applies: a fixed 1 fails
 * with min.insync.replicas=2 and is refused by topic-creation policies.
 */
export const BROKER_DEFAULT_REPLICATION_FACTOR = -1

/**
 * Creates `topic` if it is missing, with compression.type=producer so the broker keeps each producer's batches
 * as sent (any other value makes the broker recompress, and the comparison would measure the broker's codec).
 */
export async function ensureTopic(
  admin: Admin,
  topic: string,
  partitions: number,
  replicationFactor = BROKER_DEFAULT_REPLICATION_FACTOR
): Promise<'created' | 'exists'> {
  const existing = await admin.listTopics()
  if (existing.includes(topic)) return 'exists'
  try {
    await createTopicsAndWait(admin, [
      {
        topic,
        numPartitions: partitions,
        replicationFactor,
        configEntries: [{ name: 'compression.type', value: 'producer' }]
      }
    ])
  } catch (err) {
    const refusal = createTopicsRefusal(err)
    if (refusal !== undefined)
      throw new SqueezeError(
        ErrorCodes.TOPIC_REFUSED,
        `cannot create topic ${topic}: ${describeCreateTopicsError(err)}; create it yourself or pass settings the cluster accepts (--replication-factor, --create-partitions)`,
        { cause: refusal }
      )
    throw new SqueezeError(
      ErrorCodes.PRODUCE_FAILED,
      `cannot create topic ${topic}: ${describeCreateTopicsError(err)}`,
      { cause: err }
    )
  }
  return 'created'
}

/**
 * The broker's refusal when it refused the topic for a reason no retry fixes (a creation policy, an
 * authorization, a replication factor the cluster cannot meet), else undefined (a timeout, a moving controller).
 */
function createTopicsRefusal(err: unknown): unknown {
  const inner =
    typeof err === 'object' && err !== null && 'errors' in err && Array.isArray(err.errors)
      ? (err.errors as unknown[])
      : [err]
  return inner.find(
    (e) => typeof e === 'object' && e !== null && 'retriable' in e && e.retriable === false && 'type' in e
  )
}

/** kafkajs says only "Topic creation errors"; the per-topic errors inside say why (INVALID_REPLICATION_FACTOR…). */
export function describeCreateTopicsError(err: unknown): string {
  const inner =
    typeof err === 'object' && err !== null && 'errors' in err && Array.isArray(err.errors)
      ? (err.errors as unknown[])
      : []
  if (inner.length === 0) return errorMessage(err)
  return inner.map((e) => `${errorCode(e)}: ${errorMessage(e)}`).join('; ')
}

/**
 * createTopics, then waits until every partition has a leader. kafkajs's own waitForLeaders gives up when the
 * metadata of a topic created a moment ago still says UNKNOWN_TOPIC_OR_PARTITION; this keeps asking instead.
 * createTopics itself first refreshes the metadata of every topic the client follows, and kafkajs gives up on a
 * retriable error there too (a loaded test broker answered UNKNOWN_TOPIC_OR_PARTITION for a topic made a moment
 * before); a refusal (policy, ACL, replication factor) is not retriable and fails at once.
 */
export async function createTopicsAndWait(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  await retry(() => admin.createTopics({ waitForLeaders: false, topics }), {
    retries: 5,
    initialDelayMs: 100,
    maxDelayMs: 1000
  })
  const names = topics.map((t) => t.topic)
  await retry(
    async () => {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: names })
      const ready = names.every((name) => {
        const partitions = metadata.find((t) => t.name === name)?.partitions ?? []
        return partitions.length > 0 && partitions.every((p) => p.leader >= 0)
      })
      if (!ready)
        throw new SqueezeError(ErrorCodes.TIMEOUT, `topics ${names.join(', ')} have no leaders yet`, {
          retriable: true
        })
    },
    { retries: 30, initialDelayMs: 50, maxDelayMs: 500, shouldRetry: () => true }
  )
}

/**
 * Deletes `topics` and waits until the cluster's metadata no longer lists them. Topic deletion is asynchronous:
 * a DeleteTopics that timed out on a loaded controller may or may not have been applied, and a broker's metadata
 * follows the controller's a moment later. So each try deletes only what is still listed, and the call returns
 * once nothing is. A refusal (an ACL, deletion switched off) fails at once; the error names the topics left and
 * has the code TOPIC_REFUSED, where tries that ran out have TIMEOUT.
 */
export async function deleteTopicsAndWait(admin: Admin, topics: readonly string[]): Promise<void> {
  if (topics.length === 0) return
  const wanted = new Set(topics)
  let remaining: string[] = [...wanted]
  try {
    await retry(
      async () => {
        remaining = (await admin.listTopics()).filter((t) => wanted.has(t))
        if (remaining.length === 0) return
        await admin.deleteTopics({ topics: remaining, timeout: 15_000 })
        remaining = (await admin.listTopics()).filter((t) => wanted.has(t))
        if (remaining.length > 0)
          throw new SqueezeError(ErrorCodes.TIMEOUT, `topics ${remaining.join(', ')} are still listed`, {
            retriable: true
          })
      },
      { retries: 20, deadlineMs: 30_000, initialDelayMs: 100, maxDelayMs: 2000, shouldRetry: isTransient }
    )
  } catch (err) {
    throw new SqueezeError(
      isTransient(err) ? ErrorCodes.TIMEOUT : ErrorCodes.TOPIC_REFUSED,
      `could not delete topic${remaining.length > 1 ? 's' : ''} ${remaining.join(', ')}: ${errorCode(err)}: ${errorMessage(err)}; delete ${remaining.length > 1 ? 'them' : 'it'} with kafka-topics.sh --delete`,
      { cause: err }
    )
  }
}
