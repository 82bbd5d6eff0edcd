/**
 * Reads a source topic and the copier's destination topics whole and says, per destination, how many source
 * records it lacks (lost), holds more than once (duplicated: at-least-once redelivery) or holds without their
 * being in the source (foreign). scripts/k8s-workloads-e2e.sh runs it from the host against the in-cluster broker:
 *   node dist/test/k8s/copy-check.js --brokers HOST:PORT --source TOPIC --destinations T1,T2,...
 * Prints one JSON object on stdout; exits 1 when a destination lost a record or holds a foreign one.
 */
import { createHash } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../lib/consumer/partition-reader.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import { createLogger } from '../../lib/log/logger.js'
import type { IncomingRecord } from '../../lib/protocol/record.js'

/** Per partition, how many times each record (timestamp, key, value) occurs. */
export type RecordCounts = Map<number, Map<string, number>>

export interface CopyTally {
  readonly topic: string
  readonly records: number
  readonly lost: number
  readonly duplicated: number
  readonly foreign: number
}

/** What the copier keeps of a record, as one digest: partition aside, a copy is the same timestamp, key and value. */
export function recordDigest(record: Pick<IncomingRecord, 'timestamp' | 'key' | 'value'>): string {
  const hash = createHash('sha1').update(String(record.timestamp)).update('\0')
  hash.update(record.key === null ? '-' : `+${record.key.length}:`)
  if (record.key !== null) hash.update(record.key)
  if (record.value !== null) hash.update(record.value)
  return hash.digest('base64')
}

export function countRecord(counts: RecordCounts, partition: number, digest: string): void {
  let partitionCounts = counts.get(partition)
  if (partitionCounts === undefined) counts.set(partition, (partitionCounts = new Map()))
  partitionCounts.set(digest, (partitionCounts.get(digest) ?? 0) + 1)
}

function total(counts: RecordCounts): number {
  let n = 0
  for (const partition of counts.values()) for (const c of partition.values()) n += c
  return n
}

/** A destination against its source, partition by partition (the copier keeps each record's partition). */
export function tallyCopy(topic: string, source: RecordCounts, destination: RecordCounts): CopyTally {
  let lost = 0
  let duplicated = 0
  let foreign = 0
  for (const [partition, wanted] of source) {
    const held = destination.get(partition) ?? new Map<string, number>()
    for (const [digest, n] of wanted) lost += Math.max(0, n - (held.get(digest) ?? 0))
  }
  for (const [partition, held] of destination) {
    const wanted = source.get(partition) ?? new Map<string, number>()
    for (const [digest, n] of held) {
      const expected = wanted.get(digest) ?? 0
      if (expected === 0) foreign += n
      else duplicated += Math.max(0, n - expected)
    }
  }
  return { topic, records: total(destination), lost, duplicated, foreign }
}

async function readCounts(brokers: string[], topics: string[]): Promise<Map<string, RecordCounts>> {
  const log = createLogger({ level: 'warn', name: 'copy-check' })
  const connection = { ...DEFAULT_CONNECTION, brokers, clientId: 'squeeze-copy-check' }
  const admin = createKafkaClient(connection, log).admin()
  const cluster = createCluster(connection, log)
  const counts = new Map<string, RecordCounts>(topics.map((t) => [t, new Map()]))
  await admin.connect()
  await cluster.connect()
  try {
    const reader = new PartitionReader({ ...DEFAULT_READER_CONFIG, topics }, { cluster, admin, log })
    await reader.run({
      onBatch: ({ topic, partition, batch }) => {
        const topicCounts = counts.get(topic) as RecordCounts
        for (const record of batch.records) countRecord(topicCounts, partition, recordDigest(record))
      },
      onCorruptBatch: ({ error }) => {
        throw error
      }
    })
  } finally {
    await cluster.disconnect()
    await admin.disconnect()
  }
  return counts
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { brokers: { type: 'string' }, source: { type: 'string' }, destinations: { type: 'string' } },
    strict: true
  })
  if (values.brokers === undefined || values.source === undefined || values.destinations === undefined) {
    console.error('usage: copy-check --brokers HOST:PORT --source TOPIC --destinations T1,T2,...')
    process.exit(2)
  }
  const destinations = values.destinations.split(',').filter((t) => t !== '')
  const counts = await readCounts(values.brokers.split(','), [values.source, ...destinations])
  const source = counts.get(values.source) as RecordCounts
  const tallies = destinations.map((t) => tallyCopy(t, source, counts.get(t) as RecordCounts))
  console.log(JSON.stringify({ source: { topic: values.source, records: total(source) }, destinations: tallies }))
  if (tallies.some((t) => t.lost > 0 || t.foreign > 0)) process.exitCode = 1
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(`copy-check: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
