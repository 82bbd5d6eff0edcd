import type { IncomingRecord, OutgoingRecord, RecordHeader } from './record.js'

/** A record squeeze could not handle: where it came from and why, for a dead-letter topic. */
export interface PoisonRecord {
  readonly topic: string
  readonly partition: number
  /** The record as read, `offset` being its offset in `topic`. */
  readonly record: IncomingRecord
  readonly code: string
  readonly reason: string
  /** The destination that refused it, when a copy was refused. */
  readonly destination?: string
}

/** The record unchanged (key, value, headers, timestamp), plus headers that say why and where it came from. */
export function toDeadLetter(poison: PoisonRecord): OutgoingRecord & { headers: RecordHeader[] } {
  const { record } = poison
  return {
    key: record.key,
    value: record.value,
    timestamp: record.timestamp,
    headers: [
      ...record.headers,
      { key: 'squeeze.error', value: Buffer.from(poison.reason) },
      { key: 'squeeze.error.code', value: Buffer.from(poison.code) },
      { key: 'squeeze.source.topic', value: Buffer.from(poison.topic) },
      { key: 'squeeze.source.partition', value: Buffer.from(String(poison.partition)) },
      { key: 'squeeze.source.offset', value: Buffer.from(String(record.offset)) },
      ...(poison.destination === undefined
        ? []
        : [{ key: 'squeeze.destination.topic', value: Buffer.from(poison.destination) }])
    ]
  }
}
