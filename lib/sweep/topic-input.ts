/** A topic's records as the input of the in-memory codec sweep: read as compare --mode projection reads them. */
import type { Admin } from 'kafkajs'
import { readSourceRecords } from '../compare/projection/read-source.js'
import { rebatch } from '../compare/projection/rebatch.js'
import { windowBatches } from '../compare/projection/run-projection.js'
import { sampleWindows, type SamplingPlan } from '../compare/projection/sample-windows.js'
import type { SampleBudget } from '../compare/projection/sweep-flags.js'
import { missingTopicsError } from '../kafka/missing-topics.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { ReadSettings } from '../config/read-properties.js'
import type { Logger } from '../log/logger.js'
import type { SweepSource } from './sweep-input.js'
import { batchSetOf } from './codec-sweep.js'

export interface TopicSweepOptions {
  readonly topic: string
  /** Named in the not-found error. */
  readonly brokers: readonly string[]
  /** Windows spread over every partition's retained range; without it the topic is read from its start. */
  readonly sample?: SampleBudget & { readonly windows?: number }
  /** Without a sample: at most this many records from the start. */
  readonly maxRecords?: number
  /** linger.ms, replayed on the records' own timestamps. */
  readonly lingerMs: number
  /** -X squeeze.max.batch.uncompressed.bytes. */
  readonly read?: ReadSettings
}

/**
 * Pulls the records from the topic with squeeze's own Fetch requests and no consumer group (Read and Describe
 * on it are enough), sampled as compare --mode projection samples, and cuts them as the producer batches: per
 * partition, batch.size on the uncompressed batch, linger.ms on the records' timestamps. A sampled window's
 * last batch is left out, as in the projection: the window's end cut it short.
 */
export async function readTopicSweepSource(
  deps: { admin: Admin; cluster: KafkajsCluster; log: Logger },
  options: TopicSweepOptions
): Promise<SweepSource & { readonly sampling: SamplingPlan | null }> {
  const { topic, sample, lingerMs } = options
  const missing = missingTopicsError(await deps.admin.listTopics(), [topic], { where: options.brokers.join(',') })
  if (missing !== undefined) throw missing
  const withSettings = { ...deps, ...(options.read === undefined ? {} : { read: options.read }) }
  const sampled = sample === undefined ? null : await sampleWindows(withSettings, topic, sample, sample.windows)
  const budget = options.maxRecords === undefined ? {} : { maxRecords: options.maxRecords }
  const read = sampled ?? (await readSourceRecords(withSettings, topic, budget))
  const skipped =
    read.skippedBatches === 0
      ? ''
      : `; ${read.skippedBatches} unreadable batch${read.skippedBatches === 1 ? '' : 'es'} left out`
  const span = sampled === null ? 'from the start' : `sampled in ${sampled.plan.windows.length} windows`
  const how = `${read.records} records ${span}${skipped}`
  return {
    description: `topic ${topic} (${how}, linger.ms ${lingerMs} on the records' timestamps)`,
    linesNotParsed: 0,
    sampling: sampled?.plan ?? null,
    batchesAt: (batchSizeBytes) => {
      const settings = { lingerMs, batchSizeBytes }
      const batches =
        sampled === null
          ? rebatch(read.byPartition, settings)
          : sampled.windows.flatMap((w) => windowBatches(w.partition, w.records, settings))
      return batchSetOf(batches, batchSizeBytes)
    }
  }
}
