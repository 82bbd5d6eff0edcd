import type { KafkajsDecoder, KafkajsEncoder } from './kafkajs-internals.js'

/** Kafka requests nest partitions under their topic; this groups flat entries that way, keeping their order. */
export function groupByTopic<T extends { readonly topic: string }>(entries: readonly T[]): Map<string, T[]> {
  const byTopic = new Map<string, T[]>()
  for (const entry of entries) {
    const list = byTopic.get(entry.topic)
    if (list === undefined) byTopic.set(entry.topic, [entry])
    else list.push(entry)
  }
  return byTopic
}

/** The `[{ topic, partitions: [...] }]` shape of Kafka's per-partition requests, from flat entries. */
export function nestByTopic<T extends { readonly topic: string }, P>(
  entries: readonly T[],
  partition: (entry: T) => P
): Array<{ topic: string; partitions: P[] }> {
  return [...groupByTopic(entries)].map(([topic, list]) => ({ topic, partitions: list.map(partition) }))
}

/** Writes Kafka's `[topic, [partition, ...fields]]` request arrays, `writePartition` writing each entry's fields. */
export function writeTopicPartitions<T>(
  encoder: KafkajsEncoder,
  byTopic: ReadonlyMap<string, readonly T[]>,
  writePartition: (entry: T) => void
): KafkajsEncoder {
  encoder.writeInt32(byTopic.size)
  for (const [topic, entries] of byTopic) {
    encoder.writeString(topic).writeInt32(entries.length)
    for (const entry of entries) writePartition(entry)
  }
  return encoder
}

/**
 * The other direction, for responses: reads Kafka's `[topic, [partition, ...fields]]` arrays, calling
 * `readPartition` with the decoder positioned just after each partition index.
 */
export function readTopicPartitions<T>(
  decoder: KafkajsDecoder,
  readPartition: (topic: string, partition: number) => T
): T[] {
  const results: T[] = []
  const topics = decoder.readInt32()
  for (let t = 0; t < topics; t++) {
    const topic = decoder.readString()
    const partitions = decoder.readInt32()
    for (let p = 0; p < partitions; p++) results.push(readPartition(topic, decoder.readInt32()))
  }
  return results
}

/** One value per topic and partition (a partition's queue, its sent offsets), made by `create` on first use. */
export class PartitionTable<T> {
  private readonly byTopic = new Map<string, Array<T | undefined>>()

  constructor(private readonly create: (topic: string, partition: number) => T) {}

  get(topic: string, partition: number): T {
    let byPartition = this.byTopic.get(topic)
    if (byPartition === undefined) {
      byPartition = []
      this.byTopic.set(topic, byPartition)
    }
    let value = byPartition[partition]
    if (value === undefined) {
      value = this.create(topic, partition)
      byPartition[partition] = value
    }
    return value
  }

  /** Every value made so far. */
  *values(): Generator<T> {
    for (const byPartition of this.byTopic.values())
      for (const value of byPartition) if (value !== undefined) yield value
  }
}
