/**
 * Reads a topic whole (read_committed) and prints, one JSON object a line, each record whose value contains a
 * given text, with its headers: scripts/k8s-workloads-e2e.sh looks for the lines a pod printed in the topic the
 * node-logs DaemonSet ships container logs to.
 *   node dist/test/k8s/topic-lines.js --brokers HOST:PORT --topic TOPIC --contains TEXT
 */
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { DEFAULT_READER_CONFIG, PartitionReader } from '../../lib/consumer/partition-reader.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import { createLogger } from '../../lib/log/logger.js'
import type { IncomingRecord } from '../../lib/protocol/record.js'

export interface MatchedLine {
  readonly value: string
  readonly headers: Record<string, string>
}

/** The record as a line and its headers, when its value contains `text`; null otherwise. */
export function matchRecord(record: Pick<IncomingRecord, 'value' | 'headers'>, text: string): MatchedLine | null {
  const value = record.value?.toString('utf8') ?? ''
  if (!value.includes(text)) return null
  const headers: Record<string, string> = {}
  for (const h of record.headers) headers[h.key] = h.value?.toString('utf8') ?? ''
  return { value, headers }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { brokers: { type: 'string' }, topic: { type: 'string' }, contains: { type: 'string' } },
    strict: true
  })
  if (values.brokers === undefined || values.topic === undefined || values.contains === undefined) {
    console.error('usage: topic-lines --brokers HOST:PORT --topic TOPIC --contains TEXT')
    process.exit(2)
  }
  const text = values.contains
  const log = createLogger({ level: 'warn', name: 'topic-lines' })
  const connection = { ...DEFAULT_CONNECTION, brokers: values.brokers.split(','), clientId: 'squeeze-topic-lines' }
  const admin = createKafkaClient(connection, log).admin()
  const cluster = createCluster(connection, log)
  await admin.connect()
  await cluster.connect()
  try {
    const reader = new PartitionReader({ ...DEFAULT_READER_CONFIG, topics: [values.topic] }, { cluster, admin, log })
    await reader.run({
      onBatch: ({ batch }) => {
        for (const record of batch.records) {
          const line = matchRecord(record, text)
          if (line !== null) console.log(JSON.stringify(line))
        }
      },
      onCorruptBatch: ({ error }) => {
        throw error
      }
    })
  } finally {
    await cluster.disconnect()
    await admin.disconnect()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(`topic-lines: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
