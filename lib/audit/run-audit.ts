import type { ClientName } from '../apply/client-limits.js'
import { formatCodecSpec } from '../codecs/index.js'
import { CHANGE_MARGIN } from '../compare/baseline.js'
import type { BatchingSettings } from '../compare/projection/rebatch.js'
import { ProjectionPool } from '../compare/projection/worker-pool.js'
import { parseTargets } from '../copier/targets.js'
import { createKafkaClient, type KafkaConnectionConfig } from '../kafka/connection.js'
import type { Logger } from '../log/logger.js'
import { trimHeap } from '../heap-trim.js'
import { mapConcurrently } from '../map-concurrently.js'
import type { AuditReport, AuditTopic, AuditTotals, Prices } from './audit-report.js'
import { auditTopic, baseRow } from './audit-topic.js'
import { readTopicFacts, selectTopics, type TopicSelection } from './cluster-facts.js'
import { PassEnd, withTopicCut } from './pass-end.js'
import { sumMoney } from './money.js'

/**
 * The projection threads' young generation: V8 sizes it by allocation rate, and a pass that compresses topic after
 * topic otherwise grows it to tens of MiB per thread that a scavenge of a few MiB serves as well.
 */
const THREAD_HEAP = { maxYoungGenerationSizeMb: 8 }

export interface AuditOptions {
  readonly connection: KafkaConnectionConfig
  readonly selection: TopicSelection
  /** codec[:level] list, as compare's --targets. */
  readonly targets: string
  readonly sampleBytes: number
  /** Projection threads; also the topics sampled at once, so at most one topic's sample per thread is held. */
  readonly threads: number
  readonly maxDurationMs?: number | undefined
  readonly batching: BatchingSettings
  readonly consumersOverride?: number | undefined
  /** Replaces each topic's replication factor in the disk figures (--replication-factor). */
  readonly replicationFactorOverride?: number | undefined
  readonly prices: Prices | null
  /** --client: each changed topic's settings for these clients (none: no settings). */
  readonly clients?: readonly ClientName[] | undefined
  readonly version: string
  readonly log: Logger
  readonly signal?: AbortSignal | undefined
  readonly progress?: AuditProgressSink | undefined
}

/** Where the pass reports how far it is: the selection once, record bytes as they are read, each topic as it ends. */
export interface AuditProgressSink {
  begin(topics: number): void
  read(bytes: number): void
  topicDone(topic: string): void
}

/**
 * The audit: select the topics, read their facts from the cluster, then project each topic's sample on a
 * shared pool of threads, `threads` topics at a time. A topic that fails is listed with its error and the pass
 * goes on. Once --max-duration (or Ctrl-C) ends the pass, the topics being read or projected stop where they stand
 * and are listed as cut, and topics not yet started as not reached; the report says what ended it.
 */
export async function runAudit(options: AuditOptions): Promise<AuditReport> {
  const started = performance.now()
  const admin = createKafkaClient(options.connection, options.log).admin()
  await admin.connect()
  const pool = new ProjectionPool(options.threads, (t) => formatCodecSpec(t.spec), undefined, THREAD_HEAP)
  const end = new PassEnd(options.maxDurationMs, options.signal)
  try {
    const names = await selectTopics(admin, options.selection)
    options.progress?.begin(names.length)
    const facts = await readTopicFacts(admin, names)
    pool.start()
    const rows = await mapConcurrently(names, Math.max(1, options.threads), async (topic): Promise<AuditTopic> => {
      const known = facts.get(topic)
      let row: AuditTopic
      if (known === undefined || 'error' in known) {
        const error = known === undefined ? 'no facts' : known.error
        row = {
          ...emptyRow(topic),
          status: known !== undefined && known.notAuthorized ? 'not-authorized' : 'failed',
          error
        }
      } else if (end.signal.aborted) {
        row = { ...baseRow(known.facts), status: 'not-reached', wallSeconds: 0 }
      } else {
        row = await withTopicCut(end.signal, (cut) =>
          auditTopic(known.facts, {
            connection: options.connection,
            targets: (t) => parseTargets(options.targets, t),
            batching: options.batching,
            sampleBytes: options.sampleBytes,
            pool,
            threads: options.threads,
            consumersOverride: options.consumersOverride,
            replicationFactorOverride: options.replicationFactorOverride,
            prices: options.prices,
            clients: options.clients ?? [],
            ...(options.progress === undefined ? {} : { onBytesRead: (n: number) => options.progress?.read(n) }),
            cut,
            version: options.version,
            log: options.log
          })
        )
      }
      options.progress?.topicDone(topic)
      // What the topic's read and projection freed goes back to the system before the next topic's take their own.
      trimHeap()
      return row
    })
    const ranked = rank(rows)
    return {
      generatedAt: new Date().toISOString(),
      squeezeVersion: options.version,
      brokers: options.connection.brokers,
      settings: {
        sampleBytes: options.sampleBytes,
        targets: parseTargets(options.targets, 'audit').map((t) => formatCodecSpec(t.spec)),
        threads: options.threads,
        margin: CHANGE_MARGIN,
        topicsPattern: options.selection.topics?.source ?? null,
        excludePattern: options.selection.exclude?.source ?? null,
        clients: options.clients ?? [],
        consumersOverride: options.consumersOverride ?? null,
        replicationFactorOverride: options.replicationFactorOverride ?? null
      },
      prices: options.prices,
      partial: ranked.some((r) => PARTIAL_STATUSES.has(r.status)),
      stoppedBy: ranked.some((r) => r.status === 'cut' || r.status === 'not-reached') ? end.endedBy : null,
      wallSeconds: (performance.now() - started) / 1000,
      topics: ranked,
      totals: totals(ranked, options.prices !== null)
    }
  } finally {
    end.dispose()
    await pool.close()
    await admin.disconnect().catch(() => undefined)
  }
}

/** Statuses of topics the report has no figures for, though they were asked for: the report is then partial. */
const PARTIAL_STATUSES: ReadonlySet<AuditTopic['status']> = new Set(['failed', 'not-authorized', 'cut', 'not-reached'])

function emptyRow(topic: string): AuditTopic {
  return {
    topic,
    status: 'failed',
    error: null,
    facts: null,
    compacted: false,
    brokerRecompresses: false,
    sample: null,
    ingestBytesPerSecond: null,
    ingestRateNote: null,
    current: null,
    targets: [],
    verdict: null,
    savings: null,
    applyAs: null,
    wallSeconds: 0
  }
}

/** The saving a topic is ranked by: money when priced, else disk and fetch bytes per day. */
export function rankValue(row: AuditTopic): number {
  const net = row.savings?.money?.net
  if (net !== undefined && net !== null) return net
  return (row.savings?.diskBytesPerDay ?? 0) + (row.savings?.fetchBytesPerDay ?? 0)
}

/** Audited topics by what they save, largest first; then those without a ranking, in name order. */
export function rank(rows: readonly AuditTopic[]): AuditTopic[] {
  const audited = rows
    .filter((r) => r.status === 'audited')
    .sort((a, b) => rankValue(b) - rankValue(a) || a.topic.localeCompare(b.topic))
  const rest = rows.filter((r) => r.status !== 'audited').sort((a, b) => a.topic.localeCompare(b.topic))
  return [...audited, ...rest]
}

function totals(rows: readonly AuditTopic[], priced: boolean): AuditTotals {
  const audited = rows.filter((r) => r.status === 'audited')
  const sum = (f: (r: AuditTopic) => number | null | undefined): number => audited.reduce((n, r) => n + (f(r) ?? 0), 0)
  return {
    topics: rows.length,
    audited: audited.length,
    toChange: audited.filter((r) => r.verdict?.action === 'change').length,
    failed: rows.filter((r) => r.status === 'failed' || r.status === 'not-authorized').length,
    cut: rows.filter((r) => r.status === 'cut').length,
    notReached: rows.filter((r) => r.status === 'not-reached').length,
    diskBytesPerDay: sum((r) => r.savings?.diskBytesPerDay),
    fetchBytesPerDay: sum((r) => r.savings?.fetchBytesPerDay),
    steadyStateDiskBytes: sum((r) => r.savings?.steadyStateDiskBytes),
    cpuSecondsPerDay: sum((r) => r.savings?.cpuSecondsPerDay),
    money: priced
      ? sumMoney(
          audited.flatMap((r) => (r.savings?.money === null || r.savings?.money === undefined ? [] : [r.savings.money]))
        )
      : null
  }
}
