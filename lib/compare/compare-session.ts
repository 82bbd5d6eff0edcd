import type { Admin } from 'kafkajs'
import { errorMessage } from '../errors.js'
import { missingTopicsError } from '../kafka/missing-topics.js'
import { readFirstLines, resolveKind, type KindChoice } from '../formats/detect-kind.js'
import { formatFor, type LogKind } from '../formats/index.js'
import { createKafkaClient, type KafkaConnectionConfig } from '../kafka/connection.js'
import { deleteTopicsAndWait, ensureTopic } from '../kafka/topics.js'
import type { Logger } from '../log/logger.js'
import { Progress, type OnProgress, type ProgressStream } from '../progress/progress.js'
import { clusterFor } from './compare-cluster.js'
import { runCompareMode, type CompareModeSettings, type ProjectionModeOptions } from './compare-mode.js'
import { fillSource } from './fill-source.js'
import type { CompareOutcome, RateEvidence } from './run-compare.js'

/** A compare as the command validated it, before any file is read or broker started. */
export interface CompareSessionSettings {
  /** An existing topic, or a new one this command fills from the generator or a file. */
  readonly sourceKind: 'topic' | 'generate' | 'file'
  readonly kind: KindChoice
  readonly file?: string | undefined
  readonly partitions: number
  readonly seed: number
  readonly sourceTopic: string
  readonly projection: ProjectionModeOptions | undefined
  readonly formatName: LogKind | 'none'
  /** A file's --format follows the kind its lines turn out to be, unless given. */
  readonly formatFollowsKind: boolean
  /** Absent without --brokers: the cluster is then a broker this command starts. */
  readonly connection: KafkaConnectionConfig | undefined
  readonly description: string
  readonly lookbackMs: number
  readonly compare: CompareModeSettings
}

export interface CompareSessionContext {
  readonly log: Logger
  readonly signal: AbortSignal
  /** A connect attempt whose failure says whether credentials, TLS or reachability is the problem. */
  connect<T>(attempt: Promise<T>, target: KafkaConnectionConfig): Promise<T>
  readonly stderr: ProgressStream
  /** No progress line and no notes on stderr. */
  readonly quiet: boolean
}

/** What the caller reports from, while the cluster is still up (a topic's configs can still be set). */
export interface CompareResult {
  readonly outcome: CompareOutcome
  readonly connection: KafkaConnectionConfig
  /** The source was a topic this command filled: a throwaway on a cluster that may be a throwaway too. */
  readonly filled: boolean
}

/**
 * The whole compare: the file's kind checked, the cluster chosen, the source there (found or filled), copy or
 * projection run, then `finish` with the outcome; a filled source (unless kept) and a started broker are removed
 * after it, whatever happens.
 */
export async function runCompareSession(
  settings: CompareSessionSettings,
  ctx: CompareSessionContext,
  finish: (result: CompareResult) => Promise<number>
): Promise<number> {
  const { sourceKind, sourceTopic } = settings
  const { kind, firstLines } = await sourceKindOf(settings, ctx)
  const formatName = settings.formatFollowsKind ? kind : settings.formatName
  const description = sourceKind === 'file' ? `${settings.description} (${kind})` : settings.description
  const compare = { ...settings.compare, format: formatName === 'none' ? null : formatFor(formatName) }
  const progressLine = new Progress({ stream: ctx.stderr, log: ctx.log, quiet: ctx.quiet })
  const onProgress = progressLine.report
  const cluster = await clusterFor(settings.connection, ctx.log, ctx.stderr)
  try {
    const { connection } = cluster
    const admin = createKafkaClient(connection, ctx.log).admin()
    await ctx.connect(admin.connect(), connection)
    const filled = sourceKind !== 'topic'
    try {
      const rateEvidence = await sourceReady(admin, settings, kind, firstLines, { ...ctx, connection, onProgress })
      const outcome = await runCompareMode(compare, settings.projection, formatName, {
        connection,
        sourceDescription: { kind: sourceKind, description },
        rateEvidence,
        log: ctx.log,
        signal: ctx.signal,
        onProgress
      })
      progressLine.done()
      return await finish({ outcome, connection, filled })
    } finally {
      if (filled && !compare.keepTopics)
        await deleteTopicsAndWait(admin, [sourceTopic]).catch((err: unknown) =>
          ctx.log.warn({ err: errorMessage(err), topic: sourceTopic }, 'could not delete the filled source topic')
        )
      await admin.disconnect().catch(() => undefined)
    }
  } finally {
    await cluster.stop()
  }
}

/** A file's kind is checked against (or, for auto, read from) its first lines before any broker starts. */
async function sourceKindOf(
  settings: CompareSessionSettings,
  ctx: CompareSessionContext
): Promise<{ kind: LogKind; firstLines: readonly string[] }> {
  if (settings.sourceKind !== 'file' || settings.file === undefined)
    return { kind: settings.kind as LogKind, firstLines: [] }
  const firstLines = await readFirstLines(settings.file)
  const resolved = resolveKind(settings.kind, firstLines, settings.file)
  if (resolved.note !== undefined && !ctx.quiet) ctx.stderr.write(`${resolved.note}\n`)
  return { kind: resolved.kind, firstLines }
}

/** An existing topic must be there; a filled one is created and filled. Returns the evidence for the ingest rate. */
async function sourceReady(
  admin: Admin,
  settings: CompareSessionSettings,
  kind: LogKind,
  firstLines: readonly string[],
  ctx: { connection: KafkaConnectionConfig; log: Logger; signal: AbortSignal; onProgress: OnProgress }
): Promise<RateEvidence> {
  const { sourceKind, sourceTopic, file } = settings
  if (sourceKind === 'topic') {
    const missing = missingTopicsError(await admin.listTopics(), [sourceTopic], {
      where: ctx.connection.brokers.join(','),
      role: 'source topic'
    })
    if (missing !== undefined) throw missing
    return { kind: 'topic', lookbackMs: settings.lookbackMs }
  }
  await ensureTopic(admin, sourceTopic, settings.partitions)
  const records = settings.compare.maxRecords
  const input =
    sourceKind === 'file' && file !== undefined
      ? { source: 'file' as const, kind, records, file, firstLines }
      : { source: 'generate' as const, kind, records, seed: settings.seed }
  return fillSource(sourceTopic, input, ctx)
}
