// What a topic read back holds of what was sent, partition by partition: the lost / duplicated / out-of-order
// figures the fault and group tests assert and docs/reliability.md tabulates.
import type { TestKafka } from './kafka.js'

/** Per partition, the record values in offset order. */
export async function valuesByPartition(
  kafka: TestKafka,
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted' = 'read_committed'
): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>()
  for (const { partition, batch } of await kafka.readAll([topic], { isolation })) {
    const list = out.get(partition) ?? []
    for (const r of batch.records) list.push(r.value?.toString() ?? '')
    out.set(partition, list)
  }
  return out
}

export interface Figures {
  sent: number
  received: number
  lost: number
  duplicated: number
  outOfOrder: number
}

/** What `got` holds of `expected`, partition by partition: missing records, extra copies, and order. */
export function compareRecords(
  expected: ReadonlyMap<number, readonly string[]>,
  got: ReadonlyMap<number, readonly string[]>
): Figures {
  const figures: Figures = { sent: 0, received: 0, lost: 0, duplicated: 0, outOfOrder: 0 }
  for (const [partition, values] of expected) {
    const copies = new Map<string, number>()
    const received = got.get(partition) ?? []
    for (const v of received) copies.set(v, (copies.get(v) ?? 0) + 1)
    figures.sent += values.length
    figures.received += received.length
    for (const v of values) if (!copies.has(v)) figures.lost++
    for (const n of copies.values()) if (n > 1) figures.duplicated += n - 1
    // Order: the first copy of each record comes after the first copy of the one sent before it.
    const firstAt = new Map<string, number>()
    received.forEach((v, i) => firstAt.has(v) || firstAt.set(v, i))
    let last = -1
    for (const v of values) {
      const at = firstAt.get(v)
      if (at === undefined) continue
      if (at < last) figures.outOfOrder++
      last = at
    }
  }
  return figures
}
