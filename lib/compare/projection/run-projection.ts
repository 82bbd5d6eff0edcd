import { throwIfCut } from '../../errors.js'
import { createCodec, formatCodecSpec, isAdaptive, type CodecSpec } from '../../codecs/index.js'
import type { LogKind } from '../../formats/index.js'
import type { Admin } from 'kafkajs'
import { createCluster, createKafkaClient } from '../../kafka/connection.js'
import { topicRecordCount } from '../../kafka/record-count.js'
import type { SourceBatch } from '../source-batches.js'
import type { CompareTargetResult } from '../compare-report.js'
import { TimestampSample } from '../ingest-rate.js'
import { sampledSpanIngestRate } from '../topic-rate.js'
import { recommendFor, startIngestRate, type CompareRunOptions } from '../run-compare.js'
import { seededRandom } from './seeded-random.js'
import { lingerAdvice, sweepBatching } from './batching-sweep.js'
import { ChunkedProjection, type TargetProjection } from './chunked-projection.js'
import type { BatchingSweep } from './projection-details.js'
import {
  projectedTargetResults,
  projectionOutcome,
  type ProjectionMeasurements,
  type ProjectionOutcome
} from './projection-report.js'
import { collectByPartition, readSource } from './read-source.js'
import { sampleWindows, type SamplingPlan } from './sample-windows.js'
import type { SampleBudget } from './sweep-flags.js'
import {
  PartitionRebatcher,
  TopicRebatcher,
  type BatchingSettings,
  type ProjectedBatch,
  type SourceRecord
} from './rebatch.js'
import type { AdaptiveLevelSettings } from '../../producer/config.js'
import { ProjectionPool } from './worker-pool.js'
import { addProjectedBatch, isHttpSample, sampleFormatRows } from './sample-format-rows.js'
import { FormatProjection, type FormatRow } from '../format-rows.js'
import { NO_CLOCK, sealRecords } from '../../protocol/record-batch-builder.js'

export type { ProjectionOutcome } from './projection-report.js'

/** The copy mode's options, less what only a copy has (producer, topics to keep, a duration), plus how to project. */
export interface ProjectionRunOptions extends Omit<
  CompareRunOptions,
  'format' | 'producer' | 'durationMs' | 'keepTopics'
> {
  /** Decodes every value as this log kind while reading back; null reads bytes only. */
  readonly format: LogKind | null
  /** With the producer's level range and CPU budget for codec:adaptive targets (-X squeeze.compression.*). */
  readonly batching: BatchingSettings & { readonly adaptiveLevel?: AdaptiveLevelSettings | undefined }
  /** Worker threads the targets are compressed on (one target per thread at a time). */
  readonly threads: number
  /** The what-if grid; absent for none. */
  readonly sweep?: { readonly lingerMs: readonly number[]; readonly batchSizeBytes: readonly number[] }
  /** Read about this many records (or record bytes) as windows spread over every partition's retained range, instead of from the start. */
  readonly sample?: SampleBudget & {
    readonly windows?: number
    /** Project at most about this many of the sample's batches, every k-th one; absent: every batch. */
    readonly maxBatches?: number
  }
  /** With --sample: today's baseline from the stored batches the windows' records sit in (whole batches). */
  readonly baselineFromSample?: boolean
  /** Record bytes as a --sample reads them (the read has no other hook a progress line could poll). */
  readonly onBytesRead?: (bytes: number) => void
  /** Replicas every stored byte is counted on, instead of the source topic's (the audit's --replication-factor). */
  readonly replicationFactor?: number
  /** Threads shared with other projections (the caller starts and closes them); absent: a pool for this run alone. */
  readonly pool?: ProjectionPool
  /**
   * Bytes of batches one hand-off to the threads carries (default CHUNK_BYTES). The run holds a few chunks in
   * flight and each thread keeps buffers of a chunk's size, so smaller chunks bound the memory of a pass that
   * projects several topics at once.
   */
  readonly chunkBytes?: number
  /**
   * A sample of squeeze's HTTP records (probed on its first values) gets compare's format rows: the batches the
   * recommended target compressed, rebuilt as combined log lines and as JSON at its codec and level.
   */
  readonly formatRows?: boolean
  /**
   * Ends the run where it stands (the audit's --max-duration): the sample's read stops at its next fetch, the
   * projection withdraws the chunks no thread has taken, and the run rejects with a RUN_CUT error. `signal`
   * instead ends a read early and reports on what was read.
   */
  readonly cut?: AbortSignal
}

/** How often the read's progress is reported: the read itself has no hook, so the projection's count is polled. */
const READ_PROGRESS_MS = 250

/** Runs the read, reporting the records the projection has taken so far against what the read is bounded by. */
async function withReadProgress<T>(
  options: ProjectionRunOptions,
  admin: Admin,
  projection: ChunkedProjection,
  read: () => Promise<T>
): Promise<T> {
  const { onProgress } = options
  if (onProgress === undefined) return read()
  const budget =
    options.sample !== undefined
      ? 'records' in options.sample
        ? options.sample.records
        : undefined
      : options.maxRecords
  // A byte budget (--sample 64MiB, --bytes) has no record total: the line then shows the count and rate alone.
  const total =
    options.sample !== undefined && budget === undefined
      ? undefined
      : options.maxBytes !== undefined && budget === undefined
        ? undefined
        : options.sample !== undefined
          ? budget
          : await topicRecordCount(admin, options.sourceTopic, budget)
  const report = (): void =>
    onProgress({
      phase: 'read and compress',
      done: projection.records,
      ...(total === undefined ? {} : { total }),
      unit: 'records'
    })
  report()
  const timer = setInterval(report, READ_PROGRESS_MS)
  try {
    return await read()
  } finally {
    clearInterval(timer)
  }
}

/**
 * The read-only comparison: read the source's records (Read and Describe on it, nothing else), batch them as
 * the copier's producer would, compress every batch per target in memory with the producer's own sealing
 * and read each back, then report as the copy mode does. Nothing is written to the cluster: stored bytes are
 * the sealed batches' sizes, which is what a broker keeps of a producer's batches (compression.type=producer).
 * Batches are compressed while the source is still being read, so the run takes about as long as the slower of
 * the two, not their sum.
 */
export async function runProjection(options: ProjectionRunOptions): Promise<ProjectionOutcome> {
  const { connection, log } = options
  const admin = createKafkaClient(connection, log).admin()
  const cluster = createCluster(connection, log)
  const pool = options.pool ?? new ProjectionPool(options.threads, (t) => formatCodecSpec(t.spec))
  await admin.connect()
  await cluster.connect()
  try {
    // The threads load their modules while the first records are fetched.
    pool.start()
    const projection = new ChunkedProjection(
      pool,
      options.targets.map((t) => t.spec),
      {
        format: options.format,
        readBack: true,
        lingerMs: options.batching.lingerMs,
        ...adaptiveSettings(options),
        ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
        ...(options.cut === undefined ? {} : { cut: options.cut })
      }
    )
    const { measured, byPartition, formatSample } = await readAndMeasure(options, { cluster, admin, log }, projection)
    const targets = projectedTargetResults(options.targets, measured)
    const recommendation = recommendFor(targets, options, measured.ingestRate, measured.replicationFactor)
    const advised = recommendation?.target ?? targets[0]?.target
    const sweep =
      byPartition === null
        ? null
        : await whatIf(options, pool, byPartition, advised, targets, measured.meanLingerUsedMs)
    const formats =
      options.formatRows === true && options.format === 'http' && options.sample === undefined
        ? await rereadFormatRows(options, { cluster, admin, log }, recommendation?.target)
        : formatRowsOf(options, formatSample, recommendation?.target, measured.projected)
    return projectionOutcome(options, measured, targets, recommendation, sweep, formats)
  } finally {
    if (options.pool === undefined) await pool.close()
    await cluster.disconnect().catch(() => undefined)
    await admin.disconnect().catch(() => undefined)
  }
}

/**
 * Reads and projects the source, then waits for the threads' last chunks, the ingest rate and the topic's
 * metadata together: everything the report is written from, and the records the what-if re-batches.
 */
async function readAndMeasure(
  options: ProjectionRunOptions,
  clients: Pick<Parameters<typeof readSource>[0], 'cluster' | 'admin' | 'log'>,
  projection: ChunkedProjection
): Promise<{
  measured: ProjectionMeasurements
  byPartition: ProjectedSource['byPartition']
  formatSample: ProjectedSource['formatSample'] | null
}> {
  const { admin } = clients
  const timestamps = new TimestampSample()
  // A whole-topic rate's broker round trips need nothing from the read, so they run beside it (a sample's span comes from its windows).
  const wholeTopicRate = options.sample === undefined ? startIngestRate(options, admin) : null
  const topics = admin.fetchTopicMetadata({ topics: [options.sourceTopic] }).then((m) => m.topics)
  // Awaited after the read; a failure meanwhile is not an unhandled rejection.
  topics.catch(() => undefined)
  const deps = {
    ...clients,
    ...(options.read === undefined ? {} : { read: options.read }),
    ...(options.onBytesRead === undefined ? {} : { onBytesRead: options.onBytesRead }),
    ...(options.cut === undefined ? {} : { cut: options.cut })
  }
  const source = await withReadProgress(options, admin, projection, () =>
    readAndProject(options, deps, projection, timestamps)
  )
  throwIfCut(options.cut)
  const records = projection.records
  const uncompressedBytes = projection.uncompressedBytes
  options.onProgress?.({ phase: 'ingest rate' })
  // The rate's broker round trips overlap the threads' last chunks.
  const bytesPerRecord = records === 0 ? 0 : uncompressedBytes / records
  const [projected, ingestRate, [metadata]] = await Promise.all([
    projection.finish(),
    // A sample's rate is over the span it covers: the bytes per day then rest on the same records as its ratio.
    source.sampling !== null && options.rateEvidence.kind === 'topic'
      ? sampledSpanIngestRate(admin, options.sourceTopic, bytesPerRecord, source.sampling)
      : (wholeTopicRate ?? startIngestRate(options, admin))(
          bytesPerRecord,
          options.rateEvidence.kind === 'topic' ? timestamps : undefined
        ),
    topics
  ])
  const measured: ProjectionMeasurements = {
    sampling: source.sampling,
    storedBatches: source.storedBatches,
    skippedBatches: source.skippedBatches,
    records,
    uncompressedBytes,
    uncompressedPerBatch: projection.uncompressedPerBatch,
    projected,
    ingestRate,
    partitions: metadata?.partitions.length ?? 0,
    replicationFactor: options.replicationFactor ?? metadata?.partitions[0]?.replicas.length ?? 1,
    meanLingerUsedMs: projection.meanWaitMs
  }
  return { measured, byPartition: source.byPartition, formatSample: source.formatSample ?? null }
}

interface ProjectedSource {
  readonly sampling: SamplingPlan | null
  /** Every record read, by partition, for the what-if's re-batching; null when no what-if was asked for. */
  readonly byPartition: ReadonlyMap<number, readonly SourceRecord[]> | null
  /**
   * The stored batches the records were read from, for the baseline. Only a whole-topic read (no sample, no
   * budget) names that range without offsets, so a bounded projection has none.
   */
  readonly storedBatches: readonly SourceBatch[] | null
  /** Source batches that could not be read, left out: the current row says how many. */
  readonly skippedBatches: number
  /** A sample of HTTP records with `formatRows`: its windows and the stride its batches were picked at. */
  readonly formatSample?: { readonly windows: Parameters<typeof isHttpSample>[0]; readonly stride: number } | null
}

/**
 * Reads the source once and hands every batch to `projection` as it closes: the records' own batches feed the
 * baseline in the same pass, and reading waits only when the threads are a few chunks behind.
 */
async function readAndProject(
  options: ProjectionRunOptions,
  deps: Parameters<typeof readSource>[0],
  projection: ChunkedProjection,
  timestamps: TimestampSample
): Promise<ProjectedSource> {
  if (options.sample !== undefined) {
    const stored: SourceBatch[] | null = options.baselineFromSample === true ? [] : null
    const onStoredBatch =
      stored === null
        ? undefined
        : (b: SourceBatch): void => {
            stored.push(b)
          }
    const { sample } = options
    const sampled = await sampleWindows(deps, options.sourceTopic, sample, sample.windows, onStoredBatch)
    for (const list of sampled.byPartition.values()) for (const r of list) timestamps.add(r.timestamp)
    const stride = batchStride(sampled.windows, options.batching, sample.maxBatches)
    const picked = stratifiedPick(stride)
    const http = options.formatRows === true && isHttpSample(sampled.windows)
    // push copies each batch into the chunk at once, so one reused buffer makes every window's batches.
    const pushPicked = (batch: ProjectedBatch): void => {
      if (picked()) projection.push(batch)
    }
    // Without a what-if, a window's records are not needed once its batches are in a chunk: let them go, so a
    // topic's sample shrinks while it is projected instead of staying whole until the projection ends.
    // HTTP records keep theirs for the format rows.
    const byPartition = options.sweep === undefined ? null : sampled.byPartition
    if (byPartition === null) sampled.byPartition.clear()
    for (const w of sampled.windows) {
      throwIfCut(options.cut)
      eachWindowBatch(w.partition, w.records, options.batching, pushPicked)
      if (byPartition === null && !http) w.records = []
      await projection.belowLimit()
    }
    return {
      sampling: sampled.plan,
      byPartition,
      storedBatches: stored,
      skippedBatches: sampled.skippedBatches,
      formatSample: http ? { windows: sampled.windows, stride } : null
    }
  }
  const kept = options.sweep === undefined ? null : collectByPartition()
  const wholeTopic = options.maxRecords === undefined && options.maxBytes === undefined
  const storedBatches: SourceBatch[] = []
  // push copies each batch into the chunk at once, so a rebatcher reuses its buffer.
  const rebatched = new TopicRebatcher(options.batching, (batch) => projection.push(batch))
  const read = await readSource(
    deps,
    options.sourceTopic,
    {
      ...(options.maxRecords === undefined ? {} : { maxRecords: options.maxRecords }),
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes })
    },
    {
      onRecord: (partition, record) => {
        rebatched.add(partition, record)
        timestamps.add(record.timestamp)
        kept?.add(partition, record)
      },
      ...(wholeTopic ? { onStoredBatch: (batch: SourceBatch) => storedBatches.push(batch) } : {}),
      betweenRounds: () => projection.belowLimit()
    },
    { transient: kept === null, signal: options.signal }
  )
  rebatched.flush()
  const byPartition = kept?.byPartition ?? null
  return {
    sampling: null,
    byPartition,
    storedBatches: wholeTopic ? storedBatches : null,
    skippedBatches: read.skippedBatches
  }
}

/**
 * A window's batches, less its last one when it has several: the window's end cuts that batch short of what
 * linger.ms and batch.size would have made it, and short batches compress worse (a sample of many small
 * windows read 7% under the topic's ratio). The first batch opens at the window's first record, as a batch
 * opens at whichever record finds none open, so it is kept.
 */
export function windowBatches(
  partition: number,
  records: readonly SourceRecord[],
  settings: BatchingSettings
): ProjectedBatch[] {
  const batches: ProjectedBatch[] = []
  eachWindowBatch(partition, records, settings, (b) => batches.push(b), { reuse: false })
  return batches
}

/**
 * windowBatches one at a time: each batch goes to `emit` as it closes and, unless `reuse` is false, is written
 * over by the next, so `emit` copies what it keeps. A window of thousands of small batches then costs one
 * batch.size buffer, not one per batch. Returns how many batches were emitted.
 */
export function eachWindowBatch(
  partition: number,
  records: readonly SourceRecord[],
  settings: BatchingSettings,
  emit: (batch: ProjectedBatch) => void,
  options: { readonly reuse?: boolean } = {}
): number {
  let emitted = 0
  const count = (batch: ProjectedBatch): void => {
    emitted++
    emit(batch)
  }
  const rebatcher = new PartitionRebatcher(partition, settings, count, { reuse: options.reuse ?? true })
  for (const record of records) rebatcher.add(record)
  // The batch still open is the one the window's end cut short: flushed only when it is the window's one batch.
  if (emitted === 0) rebatcher.flush()
  return emitted
}

/**
 * Called once per batch in order, says whether to project it: one batch at a random place in each run of
 * `stride`. A fixed place would alias with any period in the records (writers that alternate two kinds of
 * record, round-robin partitioning) and bias the ratio; a random one per run keeps the pick unbiased and still
 * spread over every window. Seeded, so the same sample projects the same batches.
 */
export function stratifiedPick(stride: number, seed = 0x9e3779b9): () => boolean {
  if (stride <= 1) return () => true
  const random = seededRandom(seed)
  let index = 0
  let pick = Math.floor(random() * stride)
  return () => {
    const at = index++ % stride
    const chosen = at === pick
    if (at === stride - 1) pick = Math.floor(random() * stride)
    return chosen
  }
}

/**
 * Every how many batches one is projected, so that at most `maxBatches` are: 1 without a cap. Taking every
 * k-th batch spreads the projected ones over every window; the ratio's 95% interval is over those batches, so
 * the report shows what projecting fewer of them costs in precision.
 */
export function batchStride(
  windows: ReadonlyArray<{ readonly partition: number; readonly records: readonly SourceRecord[] }>,
  settings: BatchingSettings,
  maxBatches: number | undefined
): number {
  if (maxBatches === undefined) return 1
  const total = windows.reduce((n, w) => n + eachWindowBatch(w.partition, w.records, settings, () => undefined), 0)
  return Math.max(1, Math.ceil(total / Math.max(1, maxBatches)))
}

async function whatIf(
  options: ProjectionRunOptions,
  pool: ProjectionPool,
  byPartition: Parameters<typeof sweepBatching>[0],
  advised: string | undefined,
  results: readonly CompareTargetResult[],
  meanLingerUsedMs: number
): Promise<BatchingSweep> {
  const grid = options.sweep as NonNullable<ProjectionRunOptions['sweep']>
  options.onProgress?.({
    phase: 'batching what-if',
    detail: `${grid.lingerMs.length} linger.ms x ${grid.batchSizeBytes.length} batch.size`
  })
  const sweep = await sweepBatching(
    byPartition,
    options.targets.map((t): CodecSpec => t.spec),
    grid,
    pool,
    adaptiveSettings(options)
  )
  const current = results.find((r) => r.target === advised)
  const advice =
    current === undefined
      ? null
      : lingerAdvice(sweep.cells, current.target, { ...options.batching, ratio: current.ratio, meanLingerUsedMs })
  return { ...sweep, advice }
}

/**
 * compare's format rows for a sample of HTTP records, at the recommended target: the same batches it compressed,
 * picked again by the same seeded stride. Undefined without such a sample, a recommendation, or at an adaptive level.
 */
function formatRowsOf(
  options: ProjectionRunOptions,
  sample: ProjectedSource['formatSample'] | null,
  recommended: string | undefined,
  projected: readonly TargetProjection[]
): FormatRow[] | undefined {
  const at = options.targets.findIndex((t) => formatCodecSpec(t.spec) === recommended)
  const target = options.targets[at]
  if (sample === null || sample === undefined || target === undefined || isAdaptive(target.spec)) return undefined
  options.onProgress?.({ phase: 'format rows', detail: formatCodecSpec(target.spec) })
  return sampleFormatRows(target.spec, (projected[at] as TargetProjection).batchStoredBytes, (visit) => {
    const picked = stratifiedPick(sample.stride)
    for (const w of sample.windows)
      eachWindowBatch(w.partition, w.records, options.batching, (b) => {
        if (picked()) visit(b)
      })
  })
}

/**
 * Format rows for a read that keeps no sample (no --sample): the source read again as the projection read it and
 * re-batched the same way, each batch sealed at the recommended target (the Cap'n Proto records' own row) and
 * rebuilt as lines and JSON. Memory holds a batch at a time, as the projection's read does, instead of the topic;
 * each batch is paired with its own sealed size, so the rows hold even for a topic that grew between the reads.
 */
async function rereadFormatRows(
  options: ProjectionRunOptions,
  deps: Pick<Parameters<typeof readSource>[0], 'cluster' | 'admin' | 'log'>,
  recommended: string | undefined
): Promise<FormatRow[] | undefined> {
  const target = options.targets.find((t) => formatCodecSpec(t.spec) === recommended)
  if (target === undefined || isAdaptive(target.spec)) return undefined
  options.onProgress?.({ phase: 'format rows', detail: formatCodecSpec(target.spec) })
  const codec = createCodec(target.spec)
  const projection = new FormatProjection(target.spec)
  const seal = (batch: ProjectedBatch): void =>
    addProjectedBatch(projection, batch, sealRecords(batch, codec, (n) => Buffer.allocUnsafe(n), NO_CLOCK).bytes.length)
  const rebatched = new TopicRebatcher(options.batching, seal)
  await readSource(
    { ...deps, ...(options.read === undefined ? {} : { read: options.read }) },
    options.sourceTopic,
    {
      ...(options.maxRecords === undefined ? {} : { maxRecords: options.maxRecords }),
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes })
    },
    {
      onRecord: (partition, record) => {
        rebatched.add(partition, record)
      }
    },
    { transient: true, signal: options.signal }
  )
  rebatched.flush()
  return projection.rows()
}

function adaptiveSettings(options: ProjectionRunOptions): { adaptiveLevel?: AdaptiveLevelSettings } {
  return options.batching.adaptiveLevel === undefined ? {} : { adaptiveLevel: options.batching.adaptiveLevel }
}
