// squeeze audit at cluster scale: many small topics and a few large ones on one broker, audited in one pass by the
// `squeeze` CLI as a child process under GNU time (wall time, peak RSS), with each topic's wall time from its JSON.
// Section `audit` of bench/run.js. Env: BENCH_AUDIT_SMALL (200 topics), BENCH_AUDIT_SMALL_MIB (1-20: each topic a
// size in that range), BENCH_AUDIT_LARGE (5 topics), BENCH_AUDIT_LARGE_MIB (1024), BENCH_AUDIT_SAMPLE (16MiB).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AuditReport } from '../lib/audit/audit-report.js'
import type { CodecSpec } from '../lib/codecs/index.js'
import { createGenerator } from '../lib/generators/index.js'
import { createCluster, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createLogger } from '../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../lib/producer/producer.js'
import type { OutgoingRecord } from '../lib/protocol/record.js'
import { envInt, must, runNodeClient, table } from './lib/harness.js'
import { corpusValues } from './lib/inputs.js'
import type { BenchKafka } from './lib/kafka-env.js'

const CLI = fileURLToPath(new URL('../services/cli/main.js', import.meta.url))
const MIB = 1024 * 1024
const PARTITIONS = 3
/** Codecs the topics' producers use today, in turn: the audit sees a cluster of mixed habits. */
const CODECS: readonly CodecSpec[] = [
  { codec: 'lz4', level: 1 },
  { codec: 'none', level: null },
  { codec: 'zstd', level: 3 },
  { codec: 'snappy', level: null }
]
/** Records are stamped over the last hour, so every topic has an ingest rate. */
const SPAN_MS = 3_600_000
/** The scale the audit's targets are set for; the BENCH_AUDIT_* settings scale a run down. */
const FULL_SCALE = { small: 200, smallMiB: '1-20', large: 5, largeMiB: 1024 } as const

export interface AuditScaleResult {
  readonly smallTopics: number
  readonly smallMiB: readonly [number, number]
  readonly largeTopics: number
  readonly largeMiB: number
  readonly sample: string
  readonly filledBytes: number
  readonly wallSeconds: number
  readonly cpuSeconds: number
  readonly maxRssMb: number
  readonly exitCode: number | null
  readonly perTopic: {
    readonly p50: number
    readonly p90: number
    readonly max: number
    readonly large: readonly number[]
  }
  readonly audited: number
}

function sizeRange(): [number, number] {
  const [lo, hi] = (process.env['BENCH_AUDIT_SMALL_MIB'] ?? FULL_SCALE.smallMiB).split('-').map(Number)
  if (!(lo !== undefined && hi !== undefined && lo > 0 && hi >= lo))
    throw new Error('BENCH_AUDIT_SMALL_MIB takes a range of MiB such as 1-20')
  return [lo, hi]
}

/** Fills one topic with `bytes` of values, half generated http logs and half the real Apache access log. */
async function fill(producer: Producer, topic: string, bytes: number, seed: number): Promise<number> {
  const http = createGenerator('http', { seed })
  const corpus = corpusValues(20_000)
  const now = Date.now()
  let written = 0
  let block: Array<OutgoingRecord & { topic: string; partition: number }> = []
  const perRecord = 250
  const records = Math.ceil(bytes / perRecord)
  for (let i = 0; written < bytes; i++) {
    const value = i % 2 === 0 ? http.next().value : (corpus[(i * 7 + seed) % corpus.length] as Buffer)
    written += value.length
    block.push({
      topic,
      partition: i % PARTITIONS,
      key: null,
      value,
      timestamp: now - SPAN_MS + Math.floor((i * SPAN_MS) / records)
    })
    if (block.length === 5000) {
      await producer.sendMany(block)
      block = []
    }
  }
  await producer.sendMany(block)
  return written
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number)
}

export async function auditScaleBench(
  kafka: BenchKafka,
  dir: string,
  log: (s: string) => void
): Promise<AuditScaleResult> {
  const small = envInt('BENCH_AUDIT_SMALL', FULL_SCALE.small)
  const large = envInt('BENCH_AUDIT_LARGE', FULL_SCALE.large)
  const largeMiB = envInt('BENCH_AUDIT_LARGE_MIB', FULL_SCALE.largeMiB)
  const [lo, hi] = sizeRange()
  const sample = process.env['BENCH_AUDIT_SAMPLE'] ?? '16MiB'
  const prefix = `bench-audit-${Date.now().toString(36)}`
  const connection = { ...DEFAULT_CONNECTION, brokers: kafka.brokers.split(',') }
  const plan = [
    ...Array.from({ length: small }, (_, i) => ({
      topic: `${prefix}-small-${String(i).padStart(3, '0')}`,
      bytes: Math.round((lo + ((hi - lo) * ((i * 37) % 101)) / 100) * MIB)
    })),
    ...Array.from({ length: large }, (_, i) => ({ topic: `${prefix}-large-${i}`, bytes: largeMiB * MIB }))
  ]
  log(`audit bench: filling ${small} topics of ${lo}-${hi} MiB and ${large} of ${largeMiB} MiB`)
  const producerLog = createLogger({ level: 'warn', name: 'bench-audit' })
  let filledBytes = 0
  for (const [i, p] of plan.entries()) {
    await kafka.createTopic(p.topic, PARTITIONS)
    const producer = new Producer(
      { ...DEFAULT_PRODUCER_CONFIG, codec: CODECS[i % CODECS.length] as CodecSpec, lingerMs: 50 },
      { cluster: createCluster(connection, producerLog), log: producerLog }
    )
    await producer.start()
    try {
      filledBytes += await fill(producer, p.topic, p.bytes, i)
      await producer.flush()
    } finally {
      await producer.close()
    }
  }
  log(`audit bench: ${(filledBytes / MIB).toFixed(0)} MiB written; auditing`)
  const json = join(dir, 'audit.json')
  const run = await runNodeClient(
    CLI,
    ['audit', '--brokers', kafka.brokers, '--topics', `${prefix}-.*`, '--sample', sample, '--json', json, '--quiet'],
    { timeoutMs: 3_600_000 }
  )
  must(run, 'squeeze audit')
  const report = JSON.parse(readFileSync(json, 'utf8')) as AuditReport
  const walls = report.topics.map((t) => t.wallSeconds).sort((a, b) => a - b)
  return {
    smallTopics: small,
    smallMiB: [lo, hi],
    largeTopics: large,
    largeMiB,
    sample,
    filledBytes,
    wallSeconds: run.wallSeconds,
    cpuSeconds: run.cpuSeconds,
    maxRssMb: run.maxRssMb,
    exitCode: run.code,
    perTopic: {
      p50: quantile(walls, 0.5),
      p90: quantile(walls, 0.9),
      max: walls[walls.length - 1] ?? Number.NaN,
      large: report.topics.filter((t) => t.topic.includes('-large-')).map((t) => t.wallSeconds)
    },
    audited: report.totals.audited
  }
}

/** How the section is run, and whether this run was at the targets' scale or scaled down (with the settings). */
export function auditScaleNote(r: AuditScaleResult): string {
  const full = `${FULL_SCALE.small} topics of ${FULL_SCALE.smallMiB} MiB and ${FULL_SCALE.large} of ${FULL_SCALE.largeMiB} MiB`
  const reduced =
    r.smallTopics < FULL_SCALE.small ||
    r.largeTopics < FULL_SCALE.large ||
    r.largeMiB < FULL_SCALE.largeMiB ||
    `${r.smallMiB[0]}-${r.smallMiB[1]}` !== FULL_SCALE.smallMiB
  const settings = ['BENCH_AUDIT_SMALL', 'BENCH_AUDIT_SMALL_MIB', 'BENCH_AUDIT_LARGE', 'BENCH_AUDIT_LARGE_MIB']
    .filter((name) => process.env[name] !== undefined)
    .map((name) => `${name}=${process.env[name] ?? ''}`)
  const scale = reduced
    ? `**Reduced scale**: ${r.smallTopics} topics of ${r.smallMiB[0]}-${r.smallMiB[1]} MiB and ${r.largeTopics} of ` +
      `${r.largeMiB} MiB (\`${settings.join(' ')}\`), not the ${full} the targets are set for: ` +
      'the targets below are checked on this smaller cluster.'
    : `Full scale: ${full}.`
  return (
    "Topics filled by squeeze's producer (lz4, none, zstd:3, snappy in turn; generated http logs and the Apache " +
    `access log; ${PARTITIONS} partitions; records stamped over the last hour), then one \`squeeze audit --sample ` +
    `${r.sample} --json … --quiet\` with the default targets, under GNU time. ${scale}`
  )
}

export function auditScaleTable(r: AuditScaleResult): string {
  return table(
    [
      'topics',
      'data',
      'sample',
      'audited',
      'wall s',
      'CPU s',
      'peak RSS MB',
      'per topic p50 / p90 / max s',
      'large topics s'
    ],
    [
      [
        `${r.smallTopics} x ${r.smallMiB[0]}-${r.smallMiB[1]} MiB + ${r.largeTopics} x ${r.largeMiB} MiB`,
        `${(r.filledBytes / MIB).toFixed(0)} MiB`,
        r.sample,
        String(r.audited),
        r.wallSeconds.toFixed(1),
        r.cpuSeconds.toFixed(1),
        r.maxRssMb.toFixed(0),
        `${r.perTopic.p50.toFixed(2)} / ${r.perTopic.p90.toFixed(2)} / ${r.perTopic.max.toFixed(2)}`,
        r.perTopic.large.map((s) => s.toFixed(1)).join(', ')
      ]
    ]
  )
}
