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
