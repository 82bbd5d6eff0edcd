import type { ClientName } from '../apply/client-limits.js'
import { LEVEL_RANGES, type CodecName } from '../codecs/index.js'
import type { CompareReport, CompareTargetResult, CurrentBaseline } from '../compare/compare-report.js'
import { isKnownRate } from '../compare/ingest-rate.js'
import { runProjection } from '../compare/projection/run-projection.js'
import type { BatchingSettings } from '../compare/projection/rebatch.js'
import type { ProjectionPool } from '../compare/projection/worker-pool.js'
import { DEFAULT_RATE_LOOKBACK_MS } from '../compare/topic-rate.js'
import type { CopyTarget } from '../copier/copier.js'
import { errorCode, ErrorCodes, errorMessage } from '../errors.js'
import type { KafkaConnectionConfig } from '../kafka/connection.js'
import type { Logger } from '../log/logger.js'
import { auditApplyAs } from './audit-apply.js'
import type { AuditCurrent, AuditSavings, AuditTarget, AuditTopic, Prices, TopicFacts } from './audit-report.js'
import { monthlyMoney } from './money.js'

/** Fewer sampled batches than this give no trustworthy 95% interval: the topic is listed, not ranked. */
export const MIN_BATCHES_FOR_INTERVAL = 10
/**
 * Re-batched batches each target compresses per topic, at most: a sample of small batches holds tens of
 * thousands, and compressing all of them with every target is most of a topic's CPU, while a few thousand
 * spread over the sample already give a ratio whose 95% interval (reported) is a fraction of compare's margin.
 */
export const PROJECTED_BATCHES = 2048
/**
 * Bytes per hand-off to the projection threads: a topic holds a few chunks in flight and each thread keeps
 * buffers of a chunk's size, so a quarter of compare's chunk bounds the memory of the topics projected at once,
 * whatever their size. A batch larger than a chunk is handed off alone, so any batch.size still projects.
 */
export const AUDIT_CHUNK_BYTES = 2 * 1024 * 1024
const GIB = 1024 ** 3
const MIB = 1024 ** 2
const SECONDS_PER_DAY = 86_400

export interface AuditTopicOptions {
  readonly connection: KafkaConnectionConfig
  readonly targets: (topic: string) => CopyTarget[]
  readonly batching: BatchingSettings
  readonly sampleBytes: number
  readonly pool: ProjectionPool
  readonly threads: number
  /** Replaces the groups found on the topic as the fetch multiplier (--consumers). */
  readonly consumersOverride: number | undefined
  /** Replaces the topic's replication factor as the disk multiplier (--replication-factor). */
  readonly replicationFactorOverride: number | undefined
  readonly prices: Prices | null
  /** --client: each changed topic's settings for these clients. */
  readonly clients: readonly ClientName[]
  /** Record bytes as the sample reads them, for progress. */
  readonly onBytesRead?: (bytes: number) => void
  /** Ends the topic's read and projection where they stand (--max-duration): the topic is then listed as cut. */
  readonly cut?: AbortSignal
  readonly version: string
  readonly log: Logger
}

/** One topic's audit: its sample projected, today's batches as baseline, the verdict and what it is worth. */
export async function auditTopic(facts: TopicFacts, options: AuditTopicOptions): Promise<AuditTopic> {
  const started = performance.now()
  const base = baseRow(facts)
  if (facts.records === 0) return { ...base, status: 'empty', wallSeconds: seconds(started) }
  let bytesRead = 0
  const onBytesRead = (bytes: number): void => {
    bytesRead += bytes
    options.onBytesRead?.(bytes)
  }
  try {
    const consumers = options.consumersOverride ?? facts.groups.length
    const replicas = options.replicationFactorOverride ?? facts.replicationFactor
    const { report, batchShares } = await runProjection({
      connection: options.connection,
      sourceTopic: facts.topic,
      sourceDescription: { kind: 'topic', description: `topic ${facts.topic}` },
      targets: options.targets(facts.topic),
      format: null,
      rateEvidence: { kind: 'topic', lookbackMs: DEFAULT_RATE_LOOKBACK_MS },
      batching: options.batching,
      threads: options.threads,
      pool: options.pool,
      sample: { bytes: options.sampleBytes, maxBatches: PROJECTED_BATCHES },
      chunkBytes: AUDIT_CHUNK_BYTES,
      formatRows: true,
      baselineFromSample: true,
      consumers,
      replicationFactor: replicas,
      onBytesRead,
      ...(options.cut === undefined ? {} : { cut: options.cut }),
      version: options.version,
      log: options.log
    })
    const row = fromReport(report, facts, { consumers, replicas }, options.prices)
    const change = row.status === 'audited' && row.verdict?.action === 'change'
    const brokers = options.connection.brokers.join(',')
    const apply = auditApplyAs(report, facts, { clients: options.clients, brokers, change, batchShares })
    const formats = report.formats === undefined ? {} : { formats: report.formats }
    return { ...base, ...row, applyAs: apply, ...formats, wallSeconds: seconds(started) }
  } catch (err) {
    const text = errorMessage(err)
    if (errorCode(err) === ErrorCodes.RUN_CUT) {
      const read = `${(bytesRead / MIB).toFixed(1)} MiB of its sample read`
      return {
        ...base,
        status: 'cut',
        error: `${text} (${read})`,
        cutAfterBytes: bytesRead,
        wallSeconds: seconds(started)
      }
    }
    if (/AUTHORIZATION_FAILED|not authorized/i.test(text)) {
      return {
        ...base,
        status: 'not-authorized',
        error: `missing Read on topic ${facts.topic} (${text})`,
        wallSeconds: seconds(started)
      }
    }
    return { ...base, status: 'failed', error: text, wallSeconds: seconds(started) }
  }
}

/** A topic's row before (or without) any projection: its facts and nothing measured. */
export function baseRow(facts: TopicFacts): Omit<AuditTopic, 'status' | 'wallSeconds'> {
  const policies = (facts.cleanupPolicy ?? '').split(',').map((p) => p.trim())
  return {
    topic: facts.topic,
    error: null,
    facts,
    compacted: policies.includes('compact'),
    brokerRecompresses: facts.compressionType !== null && facts.compressionType !== 'producer',
    sample: null,
    ingestBytesPerSecond: null,
    ingestRateNote: null,
    current: null,
    targets: [],
    verdict: null,
    savings: null,
    applyAs: null
  }
}

function fromReport(
  report: CompareReport,
  facts: TopicFacts,
  multipliers: { readonly consumers: number; readonly replicas: number },
  prices: Prices | null
): Omit<AuditTopic, 'topic' | 'error' | 'facts' | 'compacted' | 'brokerRecompresses' | 'applyAs' | 'wallSeconds'> {
  const baseline = report.current ?? null
  const rate = report.source.ingestRate
  const intervals = report.projection?.intervals ?? []
  const sampleBatches = baseline?.row.batches ?? 0
  const sampling = report.projection?.sampling ?? null
  // The interval is over the projected batches: today's batches are measured, not estimated.
  const targets = report.targets.map((t): AuditTarget => {
    const interval = intervals.find((i) => i.target === t.target)
    return {
      target: t.target,
      ratio: t.ratio,
      ratioLow: interval?.low ?? Number.NaN,
      ratioHigh: interval?.high ?? Number.NaN,
      storedShare: baseline?.savings.find((s) => s.target === t.target)?.storedShare ?? Number.NaN,
      compressCpuSecondsPerGiB: t.compressCpuSecondsPerGiB,
      decompressCpuSecondsPerGiB: t.decompressCpuSecondsPerGiB
    }
  })
  const enough = baseline !== null && report.targets.every((t) => t.batches >= MIN_BATCHES_FOR_INTERVAL)
  const verdict =
    baseline === null
      ? null
      : baseline.verdict.action === 'change'
        ? { action: 'change' as const, target: baseline.verdict.target }
        : { action: 'keep' as const, best: baseline.verdict.best?.target ?? null }
  const savings =
    baseline === null || !isKnownRate(rate)
      ? null
      : savingsOf(baseline, report.targets, {
          facts,
          ...multipliers,
          prices,
          recordsPerSecond: rate.recordsPerSecond,
          bytesPerSecond: rate.bytesPerSecond
        })
  return {
    status: enough ? ('audited' as const) : ('too-little-data' as const),
    sample: {
      records: sampling?.windows.reduce((n, w) => n + w.records, 0) ?? report.source.records,
      bytes: sampling?.bytes ?? 0,
      batches: sampleBatches,
      projectedBatches: report.targets[0]?.batches ?? 0
    },
    ingestBytesPerSecond: isKnownRate(rate) ? rate.bytesPerSecond : null,
    ingestRateNote: isKnownRate(rate) ? null : rate.unknown,
    current: baseline === null ? null : currentOf(baseline),
    targets,
    verdict,
    savings
  }
}

function currentOf(baseline: CurrentBaseline): AuditCurrent {
  const { row } = baseline
  return {
    codec: row.codec,
    codecs: row.codecs,
    ratio: row.ratio,
    meanRecordsPerBatch: row.meanRecordsPerBatch,
    medianBatchBytes: row.batchBytes.median,
    decompressCpuSecondsPerGiB: row.decompressCpuSecondsPerGiB
  }
}

interface SavingsContext {
  readonly facts: TopicFacts
  readonly consumers: number
  /** Copies of every byte on disk: the topic's replication factor, or --replication-factor. */
  readonly replicas: number
  readonly prices: Prices | null
  readonly recordsPerSecond: number
  readonly bytesPerSecond: number
}

/**
 * What the verdict's change saves: per day on disk (x replicas) and in fetches (x groups), at retention, and the
 * CPU it costs. Keeping today's codec saves nothing and costs nothing.
 */
function savingsOf(
  baseline: CurrentBaseline,
  targets: readonly CompareTargetResult[],
  context: SavingsContext
): AuditSavings {
  const { facts } = context
  const verdict = baseline.verdict
  const chosen = verdict.action === 'change' ? targets.find((t) => t.target === verdict.target) : undefined
  const saving = verdict.action === 'change' ? baseline.savings.find((s) => s.target === verdict.target) : undefined
  if (chosen === undefined || saving === undefined) {
    const zero = { steadyStateDiskBytes: 0, fetchBytesPerDay: 0, cpuSecondsPerDay: 0 }
    return { diskBytesPerDay: 0, ...zero, money: context.prices === null ? null : monthlyMoney(context.prices, zero) }
  }
  const storedPerRecordToday = baseline.row.storedBytes / baseline.row.records
  const diskTodayPerDay = context.recordsPerSecond * SECONDS_PER_DAY * storedPerRecordToday * context.replicas
  const retained = retainedBytes(facts, context.replicas, diskTodayPerDay)
  const steadyStateDiskBytes = retained === null ? null : retained * (1 - saving.storedShare)
  const inputGiBPerDay = (context.bytesPerSecond * SECONDS_PER_DAY) / GIB
  const todayCompress = todaysCompressCpu(baseline, targets)
  const cpuSecondsPerDay =
    inputGiBPerDay *
    (chosen.compressCpuSecondsPerGiB -
      todayCompress +
      context.consumers * (chosen.decompressCpuSecondsPerGiB - baseline.row.decompressCpuSecondsPerGiB))
  const figures = { steadyStateDiskBytes, fetchBytesPerDay: saving.fetchBytesPerDaySaved, cpuSecondsPerDay }
  return {
    diskBytesPerDay: saving.storedBytesPerDaySaved,
    ...figures,
    money: context.prices === null ? null : monthlyMoney(context.prices, figures)
  }
}

/**
 * What the topic keeps on disk once retention has turned over, all replicas: the lesser of retention.ms of
 * today's daily bytes and retention.bytes per partition. Null when neither bounds it, or when compaction alone
 * decides what is kept (cleanup.policy=compact).
 */
function retainedBytes(facts: TopicFacts, replicas: number, diskPerDay: number): number | null {
  const policies = (facts.cleanupPolicy ?? 'delete').split(',').map((p) => p.trim())
  if (!policies.includes('delete')) return null
  const byTime =
    facts.retentionMs !== null && facts.retentionMs > 0 ? (diskPerDay * facts.retentionMs) / 86_400_000 : null
  const bySize =
    facts.retentionBytes !== null && facts.retentionBytes > 0
      ? facts.retentionBytes * facts.partitions * replicas
      : null
  if (byTime === null) return bySize
  return bySize === null ? byTime : Math.min(byTime, bySize)
}

/**
 * Today's producers' compress CPU per GiB: the measured target of the same codec (its default level when several
 * were measured), nothing for `none`; 0 for a mix or a codec not measured, so the change's CPU is then its gross cost.
 */
function todaysCompressCpu(baseline: CurrentBaseline, targets: readonly CompareTargetResult[]): number {
  const codec = baseline.row.codec
  if (codec === 'none' || codec === 'mix') return 0
  const same = targets.filter((t) => t.codec === codec)
  const defaultLevel = LEVEL_RANGES[codec as CodecName]?.default ?? null
  return (same.find((t) => t.level === defaultLevel) ?? same[0])?.compressCpuSecondsPerGiB ?? 0
}

function seconds(since: number): number {
  return (performance.now() - since) / 1000
}
