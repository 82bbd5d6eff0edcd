/**
 * Kafka's Java client partitions keyed records by murmur2(key) & 0x7fffffff % partitions. Doing exactly the
 * same means a key lands on the same partition whether squeeze or a Java producer wrote it.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length
  const m = 0x5bd1e995
  let h = 0x9747b28c ^ length
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24)
    k = Math.imul(k, m)
    k ^= k >>> 24
    k = Math.imul(k, m)
    h = Math.imul(h, m) ^ k
  }
  const tail = length & ~3
  const rest = length & 3
  if (rest === 3) h ^= data[tail + 2]! << 16
  if (rest >= 2) h ^= data[tail + 1]! << 8
  if (rest >= 1) {
    h ^= data[tail]!
    h = Math.imul(h, m)
  }
  h ^= h >>> 13
  h = Math.imul(h, m)
  h ^= h >>> 15
  return h | 0
}

export function partitionForKey(key: Uint8Array, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions
}

/**
 * Keyless records stick to one partition until its batch closes, then move to another (KIP-480), so
 * batches fill up instead of every partition getting a thin slice of each linger window.
 */
export class StickyPartitioner {
  private readonly current = new Map<string, number>()

  constructor(private readonly random: () => number = Math.random) {}

  partition(topic: string, partitions: number): number {
    let chosen = this.current.get(topic)
    if (chosen === undefined || chosen >= partitions) {
      chosen = Math.floor(this.random() * partitions)
      this.current.set(topic, chosen)
    }
    return chosen
  }

  /** Called when the batch of `partition` closed: the next keyless record picks another partition. */
  batchClosed(topic: string, partition: number, partitions: number): void {
    if (this.current.get(topic) !== partition) return
    if (partitions <= 1) return
    const next = Math.floor(this.random() * (partitions - 1))
    this.current.set(topic, next >= partition ? next + 1 : next)
  }
}
