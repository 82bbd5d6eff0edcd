import { readTopicPartitions, writeTopicPartitions } from './group-by-topic.js'
import { Decoder, Encoder, type KafkajsCluster } from './kafkajs-internals.js'
import { ownRequest, type OwnRequest } from './own-request.js'

export interface PartitionDiskSize {
  readonly topic: string
  readonly partition: number
  readonly brokerId: number
  readonly logDir: string
  readonly sizeBytes: number
}

const DESCRIBE_LOG_DIRS_API_KEY = 35
// v1: the oldest version Kafka 4.x serves (KIP-896) and the last one before flexible encoding.
const DESCRIBE_LOG_DIRS_VERSION = 1

export function describeLogDirsRequest(
  topics: ReadonlyMap<string, readonly number[]>
): OwnRequest<Array<Omit<PartitionDiskSize, 'brokerId'>>> {
  return ownRequest(
    { apiKey: DESCRIBE_LOG_DIRS_API_KEY, apiVersion: DESCRIBE_LOG_DIRS_VERSION, apiName: 'DescribeLogDirs' },
    {
      encode: () => {
        const encoder = new Encoder()
        return writeTopicPartitions(encoder, topics, (partition) => encoder.writeInt32(partition))
      },
      decode: (raw) => {
        const decoder = new Decoder(raw)
        decoder.readInt32() // throttle_time_ms
        const sizes: Array<Omit<PartitionDiskSize, 'brokerId'>> = []
        const dirs = decoder.readInt32()
        for (let d = 0; d < dirs; d++) {
          decoder.readInt16() // error_code of the log dir: an offline dir simply reports no partitions
          const logDir = decoder.readString()
          sizes.push(
            ...readTopicPartitions(decoder, (topic, partition) => {
              const sizeBytes = Number(decoder.readInt64().toString())
              decoder.readInt64() // offset_lag
              decoder.readInt8() // is_future_key
              return { topic, partition, logDir, sizeBytes }
            })
          )
        }
        return sizes
      }
    }
  )
}

/**
 * Bytes each replica of the topics' partitions holds on its broker's disk (DescribeLogDirs, API 35), asked
 * of every broker that hosts a replica. kafkajs has no DescribeLogDirs, so the request is squeeze's own.
 */
export async function describeLogDirs(
  cluster: KafkajsCluster,
  topics: readonly string[]
): Promise<PartitionDiskSize[]> {
  await cluster.refreshMetadata()
  const byBroker = new Map<number, Map<string, number[]>>()
  for (const topic of topics) {
    for (const partition of cluster.findTopicPartitionMetadata(topic)) {
      for (const brokerId of partition.replicas) {
        const perTopic = byBroker.get(brokerId) ?? new Map<string, number[]>()
        perTopic.set(topic, [...(perTopic.get(topic) ?? []), partition.partitionId])
        byBroker.set(brokerId, perTopic)
      }
    }
  }
  const results = await Promise.all(
    [...byBroker].map(async ([brokerId, perTopic]) => {
      const broker = await cluster.findBroker({ nodeId: brokerId })
      const { request, response } = describeLogDirsRequest(perTopic)
      const sizes = await broker.connectionPool.send({ request, response })
      return sizes.map((size) => ({ ...size, brokerId }))
    })
  )
  return results.flat()
}

/**
 * Bytes of one replica per partition (the largest: the most caught-up), summed over the partitions: what a
 * codec saves on each copy of the data, whatever the replication factor.
 */
export function bytesPerReplica(
  sizes: ReadonlyArray<Pick<PartitionDiskSize, 'topic' | 'partition' | 'sizeBytes'>>
): number {
  const perPartition = new Map<string, number>()
  for (const { topic, partition, sizeBytes } of sizes) {
    const key = `${topic}\u0000${partition}`
    perPartition.set(key, Math.max(perPartition.get(key) ?? 0, sizeBytes))
  }
  return [...perPartition.values()].reduce((a, b) => a + b, 0)
}

/** Bytes of every replica on every broker: what the cluster's disks hold. */
export function bytesAllReplicas(sizes: ReadonlyArray<Pick<PartitionDiskSize, 'sizeBytes'>>): number {
  return sizes.reduce((sum, s) => sum + s.sizeBytes, 0)
}
