import { formatCodecSpec, type CodecSpec } from '../../codecs/index.js'
import type { CopyTarget } from '../../copier/copier.js'
import type { LogKind } from '../../formats/index.js'
import { createCluster, createKafkaClient } from '../../kafka/connection.js'
import { BATCH } from '../../protocol/batch-layout.js'
import { currentBaseline } from '../baseline.js'
import { scanSourceBatches } from '../source-batches.js'
import type { CompareReport, CompareTargetResult } from '../compare-report.js'
import { TimestampSample } from '../ingest-rate.js'
import { sampledSpanIngestRate } from '../topic-rate.js'
import { measureIngestRate, recommendFor, type CompareOutcome, type CompareRunOptions } from '../run-compare.js'
import { bootstrapRatioInterval } from './bootstrap.js'
import { lingerAdvice, sweepBatching } from './batching-sweep.js'
import { meanWaitMs, packBatches } from './pack-batches.js'
import type { BatchingSweep, ProjectionDetails } from './projection-details.js'
import { readSourceRecords } from './read-source.js'
import { sampleWindows } from './sample-windows.js'
import type { SampleBudget } from './sweep-flags.js'
import { rebatch, rebatchPartition, type BatchingSettings, type ProjectedBatch, type SourceRecord } from './rebatch.js'
import type { BatchSlot, TargetProjection } from './project-target.js'
import { levelMix } from '../level-mix.js'
import { ProjectionPool } from './worker-pool.js'

/** The copy mode's options, less what only a copy has (producer, topics to keep, a duration), plus how to project. */
export interface ProjectionRunOptions extends Omit<CompareRunOptions, 'format' | 'producer' | 'durationMs' | 'keepTopics'> {
  /** Decodes every value as this log kind while reading back; null reads bytes only. */
  readonly format: LogKind | null
  readonly batching: BatchingSettings
  /** Worker threads the targets are compressed on (one target per thread at a time). */
  readonly threads: number
  /** The what-if grid; absent for none. */
  readonly sweep?: { readonly lingerMs: readonly number[]; readonly batchSizeBytes: readonly number[] }
  /** Read about this many records (or record bytes) as windows spread over every partition's retained range, instead of from the start. */
  readonly sample?: SampleBudget & { readonly windows?: number }
}

const GIB = 1024 ** 3

export interface ProjectionOutcome extends CompareOutcome {
  /** Per target, stored bytes per source partition (what DescribeLogDirs reports for a copy). */
  readonly storedBytesByPartition: ReadonlyMap<string, Readonly<Record<number, number>>>
}

/**
 * The read-only comparison: read the source's records (Read and Describe on it, nothing else), batch them as
 * the copier's producer would, compress every batch per target in memory with the producer's own sealing
 * and read each back, then report as the copy mode does. Nothing is written to the cluster: stored bytes are
 * the sealed batches' sizes, which is what a broker keeps of a producer's batches (compression.type=producer).
 */
export async function runProjection(options: ProjectionRunOptions): Promise<ProjectionOutcome> {
  const { connection, log } = options
  const admin = createKafkaClient(connection, log).admin()
  const cluster = createCluster(connection, log)
  const pool = new ProjectionPool(options.threads, (t) => formatCodecSpec(t.spec))
  await admin.connect()
  await cluster.connect()
  try {
    options.onProgress?.(`reading ${options.sourceTopic}`)
    const sampled = options.sample === undefined ? null : await sampleWindows({ cluster, admin }, options.sourceTopic, options.sample, options.sample.windows)
    const source = sampled ?? await readSourceRecords({ cluster, admin, log }, options.sourceTopic, {
        ...(options.maxRecords === undefined ? {} : { maxRecords: options.maxRecords }), ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes })
      }, options.signal)
    const batches = sampled === null ? rebatch(source.byPartition, options.batching) : sampled.windows.flatMap((w) => windowBatches(w.partition, w.records, options.batching))
    const { data, slots } = packBatches(batches)
    const records = slots.reduce((n, x) => n + x.count, 0)
    options.onProgress?.(`compressing ${batches.length} batches with ${options.targets.length} targets on ${options.threads} threads`)
    const projected = await pool.run(options.targets.map((t) => ({ spec: t.spec, format: options.format, data, slots, readBack: true, lingerMs: options.batching.lingerMs })))
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [options.sourceTopic] })).topics
    const replicationFactor = metadata?.partitions[0]?.replicas.length ?? 1
    const results = options.targets.map((t, i) => targetResult(t, projected[i] as TargetProjection, replicationFactor, slots))
    const noneStored = results.find((r) => r.codec === 'none')?.storedBytes
    const withBaseline = results.map((r) => ({ ...r, ratioVsNone: noneStored === undefined || r.storedBytes === 0 ? null : noneStored / r.storedBytes }))
    const uncompressedBytes = withBaseline[0]?.uncompressedBytes ?? 0
    const timestamps = new TimestampSample()
    for (const records of source.byPartition.values()) for (const r of records) timestamps.add(r.timestamp)
    options.onProgress?.('measuring the source\'s ingest rate')
    const bytesPerRecord = records === 0 ? 0 : uncompressedBytes / records
    // A sample's rate is over the span it covers: the bytes per day then rest on the same records as its ratio.
    const ingestRate = sampled !== null && options.rateEvidence.kind === 'topic' ? await sampledSpanIngestRate(admin, options.sourceTopic, bytesPerRecord, sampled.plan)
      : await measureIngestRate(options, admin, bytesPerRecord, options.rateEvidence.kind === 'topic' ? timestamps : undefined)
    const recommendation = recommendFor(withBaseline, options, ingestRate, replicationFactor)
    const uncompressedPerBatch = slots.map((s) => s.end - s.start + BATCH.HEADER_BYTES)
    const meanLingerUsedMs = meanWaitMs(batches)
    const projection: ProjectionDetails = {
      threads: options.threads,
      meanLingerUsedMs,
      sampling: sampled?.plan ?? null,
      intervals: withBaseline.map((r, i) => ({ target: r.target, ratio: r.ratio, ...bootstrapRatioInterval(uncompressedPerBatch, (projected[i] as TargetProjection).batchStoredBytes) })),
      sweep: options.sweep === undefined ? null : await whatIf(options, pool, source.byPartition, recommendation?.target ?? withBaseline[0]?.target, withBaseline, meanLingerUsedMs)
    }
    // The baseline is what the source stores for the records read; only a whole-topic read (no sample, no
    // budget) names that range without offsets, so a bounded projection has none.
    const wholeTopic = sampled === null && options.maxRecords === undefined && options.maxBytes === undefined
    options.onProgress?.('reading the source\'s stored batches')
    const current = !wholeTopic ? null : currentBaseline(await scanSourceBatches(options.connection, options.sourceTopic, undefined, options.log), {
      targets: withBaseline, recommendation, ingestRate, uncompressedBytesPerRecord: records === 0 ? 0 : uncompressedBytes / records, replicationFactor,
      consumers: options.consumers, lingerMs: options.batching.lingerMs, batchSizeBytes: options.batching.batchSizeBytes
    })
    const report: CompareReport = {
      generatedAt: new Date().toISOString(),
      mode: 'projection',
      projection,
      squeezeVersion: options.version,
      source: {
        kind: options.sourceDescription.kind, topic: options.sourceTopic, description: options.sourceDescription.description,
        records, partitions: metadata?.partitions.length ?? 0, uncompressedBytes, ingestRate
      },
      settings: { lingerMs: options.batching.lingerMs, batchSizeBytes: options.batching.batchSizeBytes, replicationFactor, consumers: options.consumers },
      targets: withBaseline,
      recommendation,
      current
    }
    return {
      report, partial: options.signal?.aborted === true, sentBytesByTopic: new Map(),
      storedBytesByPartition: new Map(withBaseline.map((r, i) => [r.target, (projected[i] as TargetProjection).storedBytesByPartition]))
    }
  } finally {
    await pool.close()
    await cluster.disconnect().catch(() => undefined)
    await admin.disconnect().catch(() => undefined)
  }
}

/**
 * A window's batches, less its last one when it has several: the window's end cuts that batch short of what
 * linger.ms and batch.size would have made it, and short batches compress worse (a sample of many small
 * windows read 7% under the topic's ratio). The first batch opens at the window's first record, as a batch
 * opens at whichever record finds none open, so it is kept.
 */
export function windowBatches(partition: number, records: readonly SourceRecord[], settings: BatchingSettings): ProjectedBatch[] {
  const batches = rebatchPartition(partition, records, settings)
  return batches.length > 1 ? batches.slice(0, -1) : batches
}

async function whatIf(options: ProjectionRunOptions, pool: ProjectionPool, byPartition: Parameters<typeof sweepBatching>[0], advised: string | undefined,
  results: readonly CompareTargetResult[], meanLingerUsedMs: number): Promise<BatchingSweep> {
  const grid = options.sweep as NonNullable<ProjectionRunOptions['sweep']>
  options.onProgress?.(`batching what-if: ${grid.lingerMs.length} linger.ms x ${grid.batchSizeBytes.length} batch.size`)
  const sweep = await sweepBatching(byPartition, options.targets.map((t): CodecSpec => t.spec), grid, pool)
  const current = results.find((r) => r.target === advised)
  const advice = current === undefined ? null : lingerAdvice(sweep.cells, current.target, { ...options.batching, ratio: current.ratio, meanLingerUsedMs })
  return { ...sweep, advice }
}

/** Every replica of a partition holds the same batches, so all replicas store replicationFactor times one. */
function targetResult(target: CopyTarget, p: TargetProjection, replicationFactor: number, slots: readonly BatchSlot[]): CompareTargetResult {
  const perGiB = (seconds: number): number => (p.uncompressedBytes === 0 ? 0 : seconds / (p.uncompressedBytes / GIB))
  return {
    target: formatCodecSpec(target.spec),
    codec: target.spec.codec,
    level: target.spec.level,
    // No topic is written: the row names what it was projected from.
    topic: `${target.topic} (not created)`,
    records: p.records,
    batches: p.batches,
    meanRecordsPerBatch: p.batches === 0 ? 0 : p.records / p.batches,
    uncompressedBytes: p.uncompressedBytes,
    sentBytes: p.storedBytes,
    storedBytes: p.storedBytes,
    storedBytesAllReplicas: p.storedBytes * replicationFactor,
    ratio: p.storedBytes === 0 ? 0 : p.uncompressedBytes / p.storedBytes,
    ratioVsNone: null,
    compressCpuSeconds: p.compressCpuSeconds,
    compressCpuSecondsPerGiB: perGiB(p.compressCpuSeconds),
    compressMBPerSecondPerCore: p.compressCpuSeconds === 0 ? 0 : p.uncompressedBytes / 1e6 / p.compressCpuSeconds,
    decompressCpuSeconds: p.decompressCpuSeconds,
    decompressCpuSecondsPerGiB: perGiB(p.decompressCpuSeconds),
    decodeCpuSecondsPerGiB: perGiB(p.decodeCpuSeconds),
    consumerRecordsPerSecond: p.records / p.readSeconds,
    recompression: { verdict: 'not-checked', batchesChecked: 0, batchesRewritten: 0 },
    digest: p.digest,
    ...(p.levels === undefined ? {} : { levelMix: levelMix(slots.map((s, i) => ({ level: p.levels?.[i] ?? null, uncompressedBytes: BATCH.HEADER_BYTES + s.end - s.start }))) })
  }
}
