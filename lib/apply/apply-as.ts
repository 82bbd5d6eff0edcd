import { parseCodecSpec } from '../codecs/index.js'
import type { CompareReport, CompareTargetResult } from '../compare/compare-report.js'
import { bestTargetPerClient, type ClientTarget, type PickRule } from './best-target.js'
import { CLIENT_LIMITS, type ClientName } from './client-limits.js'
import {
  batchingSettings,
  settingsFor,
  type BatchingTarget,
  type ClientSettings,
  type SettingsContext
} from './client-settings.js'
import { JAVA_BATCH_HEADER_BYTES, type JavaRun } from './java-estimator.js'
import { topicConfigFor, type TopicCompressionMode, type TopicConfigChoice } from './topic-config.js'

/** One client's verdict with its settings: the `applyAs` entries of the compare JSON. */
export interface ClientApply extends ClientTarget {
  /** Null when the client can write none of the measured targets. */
  readonly settings: ClientSettings | null
  /** The batching change in the client's own names, when batching is the limit; null otherwise. */
  readonly batchingAdvice: string | null
  /** What the client's figures do not cover, or null. */
  readonly caveat: string | null
  /** Where the client's limit is documented. */
  readonly source: string
}

/** Why batching is the limit and what to batch at instead. */
export interface BatchingAdvice {
  readonly reason: string
  readonly lingerMs: number
  readonly batchSizeBytes: number
}

/** The verdict as changes to make: per client, and on the topic. */
export interface ApplyAs {
  readonly clients: readonly ClientApply[]
  /** The batching the figures were measured at, which every client's settings reproduce. */
  readonly batching: { readonly lingerMs: number; readonly batchSizeBytes: number; readonly bytesPerRecord: number }
  readonly batchingAdvice: BatchingAdvice | null
  /** The topic's configs for the recommended target; null when nothing was recommended. */
  readonly topic: TopicConfigChoice | null
  /**
   * Today's codec (as the topic's batches hold it, or `mix`) when the verdict against it is to keep it: then no
   * client has a target and nothing is to change. Null otherwise.
   */
  readonly keep: string | null
}

export interface ApplyOptions extends SettingsContext {
  readonly topicMode: TopicCompressionMode
  /** Today's codec, when the verdict against it is to keep it (ApplyAs.keep). */
  readonly keep?: string | null
  /**
   * Per target, each measured batch's compressed record bytes / uncompressed record bytes, in batch order (a
   * projection has them); without them a row's overall ratio stands for every batch.
   */
  readonly batchShares?: ReadonlyMap<string, readonly number[]>
}

/** Turns a report into settings per client, picking each client's target with `rule` (the recommendation's). */
export function applyAs(
  report: CompareReport,
  clients: readonly ClientName[],
  rule: PickRule,
  options: ApplyOptions
): ApplyAs {
  const { source, settings } = report
  const bytesPerRecord = source.records === 0 ? 0 : source.uncompressedBytes / source.records
  const batching = { lingerMs: settings.lingerMs, batchSizeBytes: settings.batchSizeBytes, bytesPerRecord }
  const advice = batchingAdvice(report)
  const picks = bestTargetPerClient(report.targets, clients, rule)
  // The rule's own pick: the recommendation in compare, the verdict in the audit.
  const recommended = rule(report.targets)?.target
  return {
    clients: picks.map((pick) => {
      const spec = pick.target === null ? null : parseCodecSpec(pick.target)
      const row = report.targets.find((r) => r.target === pick.target)
      const java =
        row === undefined ? undefined : javaRunOf(row, options.batchShares?.get(row.target), source.partitions)
      const at = (lingerMs: number, batchSizeBytes: number, measured: boolean): BatchingTarget => ({
        lingerMs,
        batchSizeBytes,
        ratio: pick.ratio ?? 1,
        bytesPerRecord,
        ...(measured && java !== undefined ? { java } : {})
      })
      const limits = CLIENT_LIMITS[pick.client]
      return {
        ...pick,
        settings:
          spec === null
            ? null
            : settingsFor(pick.client, spec, at(batching.lingerMs, batching.batchSizeBytes, true), options),
        batchingAdvice:
          spec === null || advice === null
            ? null
            : batchingSettings(pick.client, at(advice.lingerMs, advice.batchSizeBytes, false), spec.codec).join('  '),
        caveat: limits.caveat,
        source: limits.source
      }
    }),
    batching,
    batchingAdvice: advice,
    topic:
      recommended === undefined
        ? null
        : topicConfigFor(options.topicMode, parseCodecSpec(recommended), options.topic, options.brokers),
    keep: options.keep ?? null
  }
}

/**
 * The row's run as Java's estimator sees it: its records, their mean size and each batch's measured compressed
 * share, and the mean batch the figures were measured at; undefined when the row has no batches.
 */
function javaRunOf(
  row: CompareTargetResult,
  shares: readonly number[] | undefined,
  partitions: number
): { run: JavaRun; meanBatchBytes: number; partitions: number } | undefined {
  const recordBytes = row.uncompressedBytes - JAVA_BATCH_HEADER_BYTES * row.batches
  if (row.batches <= 0 || row.records <= 0 || recordBytes <= 0) return undefined
  const overall = (row.storedBytes - JAVA_BATCH_HEADER_BYTES * row.batches) / recordBytes
  return {
    run: {
      records: row.records,
      recordBytes: recordBytes / row.records,
      compressedShares: shares !== undefined && shares.length > 0 ? shares : [overall]
    },
    meanBatchBytes: row.uncompressedBytes / row.batches,
    partitions
  }
}

/**
 * Batching is the limit when the what-if found a longer linger.ms worth it, or when today's batches are small
 * (the baseline's batching limit): then the change is to batch as the advice or the measured run did.
 */
function batchingAdvice(report: CompareReport): BatchingAdvice | null {
  const sweep = report.projection?.sweep?.advice
  if (sweep !== undefined && sweep !== null) {
    return {
      reason:
        `the batching what-if: linger.ms ${sweep.fromLingerMs} -> ${sweep.toLingerMs} takes ${sweep.target} ` +
        `from ratio ` +
        `${sweep.fromRatio.toFixed(2)} to ${sweep.toRatio.toFixed(2)}, adding ` +
        `${sweep.addedLatencyMs.toFixed(0)} ms mean wait`,
      lingerMs: sweep.toLingerMs,
      batchSizeBytes: sweep.batchSizeBytes
    }
  }
  const limit = report.current?.batchingLimit
  if (limit === undefined || limit === null) return null
  return {
    reason:
      `today's batches are small (median ${limit.medianBatchBytes} bytes, ` +
      `${limit.meanRecordsPerBatch.toFixed(1)} records per batch); ` +
      'the figures are for batches made at this linger.ms and batch.size',
    lingerMs: limit.lingerMs,
    batchSizeBytes: limit.batchSizeBytes
  }
}
