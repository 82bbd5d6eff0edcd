import type { Admin } from 'kafkajs'
import { PartitionReader, DEFAULT_READER_CONFIG } from '../consumer/partition-reader.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { BROKER_DEFAULT_REPLICATION_FACTOR, createTopicsAndWait } from '../kafka/topics.js'
import type { Logger } from '../log/logger.js'
import type { ProducerRecord } from '../producer/producer.js'
import type { FilePosition } from './file-set.js'

/**
 * Read positions kept in a compacted topic, one record per file keyed `FILESET/DEV:INO`, written in the same
 * transaction as the records of the lines before them: a reader with read_committed sees a position exactly when
 * it sees those records.
 */
export class KafkaPositions {
  private savedAtMs: number | null = null

  constructor(
    readonly topic: string,
    private readonly fileSet: string
  ) {}

  /** Creates the topic (one partition, cleanup.policy=compact) when it is missing. */
  async ensureTopic(admin: Admin): Promise<void> {
    if ((await admin.listTopics()).includes(this.topic)) return
    await createTopicsAndWait(admin, [
      {
        topic: this.topic,
        numPartitions: 1,
        replicationFactor: BROKER_DEFAULT_REPLICATION_FACTOR,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }]
      }
    ])
  }

  /**
   * The positions of the last committed transaction: the topic read with read_committed to its end, the last
   * record per file winning. Read after the producer's InitProducerId, which aborts a transaction a previous
   * instance left open, so nothing after them can still commit.
   */
  async load(deps: { cluster: KafkajsCluster; admin: Admin; log: Logger }): Promise<FilePosition[]> {
    const prefix = `${this.fileSet}/`
    const latest = new Map<string, FilePosition>()
    const config = { ...DEFAULT_READER_CONFIG, topics: [this.topic], isolation: 'read_committed' as const }
    const reader = new PartitionReader(config, deps)
    await reader.run({
      onBatch: ({ batch }) => {
        for (const record of batch.records) {
          const key = record.key?.toString() ?? ''
          if (!key.startsWith(prefix) || record.value === null) continue
          latest.set(key, JSON.parse(record.value.toString()) as FilePosition)
        }
      },
      onCorruptBatch: ({ error }) => {
        throw error
      }
    })
    return [...latest.values()]
  }

  /** The records that save `positions`, to send inside the transaction. */
  records(positions: readonly FilePosition[]): ProducerRecord[] {
    this.savedAtMs = Date.now()
    return positions.map((p) => ({
      topic: this.topic,
      key: Buffer.from(`${this.fileSet}/${p.dev}:${p.ino}`),
      value: Buffer.from(JSON.stringify(p))
    }))
  }

  ageSeconds(): number | null {
    return this.savedAtMs === null ? null : (Date.now() - this.savedAtMs) / 1000
  }
}
