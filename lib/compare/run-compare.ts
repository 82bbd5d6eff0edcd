import { createHash } from 'node:crypto'
import type { Admin } from 'kafkajs'
import { formatCodecSpec, isAdaptive, type CodecSpec } from '../codecs/index.js'
import { Copier, type CopyTarget } from '../copier/copier.js'
import { prepareDestinations } from '../copier/destinations.js'
import { DEFAULT_READER_CONFIG, PartitionReader, type BatchEvent } from '../consumer/partition-reader.js'
import { TopicMeasurements, type TopicMeasurement } from '../consumer/measure-topics.js'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { LogFormat } from '../formats/index.js'
import { createCluster, createKafkaClient, type KafkaConnectionConfig } from '../kafka/connection.js'
import { bytesAllReplicas, bytesPerReplica, describeLogDirs } from '../kafka/describe-log-dirs.js'
import { topicRecordCount } from '../kafka/record-count.js'
import { deleteTopicsAndWait } from '../kafka/topics.js'
import type { Logger } from '../log/logger.js'
import type { OnProgress } from '../progress/progress.js'
import { Producer, type AckedBatch, type ProducerConfig } from '../producer/producer.js'
import { batchHeader } from '../protocol/record-batch-reader.js'
import type { StoredBatch } from '../verify/recompression.js'
import { checkRecompression } from '../verify/recompression.js'
import type { CompareReport, CompareSource, CompareTargetResult } from './compare-report.js'
import { isKnownRate, rateFromSample, TimestampSample, type IngestRate } from './ingest-rate.js'
import { currentBaseline } from './baseline.js'
import { FormatProjection, type FormatRow } from './format-rows.js'
import { levelMix } from './level-mix.js'
import { recommend } from './recommend.js'
import { scanSourceBatches } from './source-batches.js'
import type { ReadSettings } from '../config/read-properties.js'
import { topicIngestRateLookup } from './topic-rate.js'

/**
 * What the source's ingest rate is measured from. Never the copy's own timestamps for a filled source: those
 * say how fast compare replayed a file, not how fast the file was written.
 */
export type RateEvidence =
  /** An existing topic: its offsets by timestamp over the last lookbackMs, else the copied records' timestamps. */
  | { readonly kind: 'topic'; readonly lookbackMs: number }
  /** Times the fill saw: a file's lines' own timestamps, or the generator's simulated clock. */
  | {
      readonly kind: 'sample'
      readonly source: 'line-timestamps' | 'generator-timestamps'
      readonly sample: TimestampSample
    }

export interface CompareRunOptions {
  readonly connection: KafkaConnectionConfig
  readonly sourceTopic: string
  readonly sourceDescription: { kind: CompareSource['kind']; description: string }
  readonly targets: readonly CopyTarget[]
  /** Decodes each destination's values while measuring; null reads bytes only. */
  readonly format: LogFormat | null
  readonly rateEvidence: RateEvidence
  readonly producer: ProducerConfig
  readonly maxRecords?: number
  readonly maxBytes?: number
  readonly durationMs?: number
  readonly keepTopics: boolean
  /** -X squeeze.max.batch.uncompressed.bytes for every read of the source and the destinations. */
  readonly read?: ReadSettings
  readonly consumers: number
  readonly cpuBudgetSecondsPerGiB?: number
  readonly targetRatio?: number
  readonly version: string
  readonly log: Logger
  readonly signal?: AbortSignal
  readonly onProgress?: OnProgress
}

export interface CompareOutcome {
  readonly report: CompareReport
  /** True when Ctrl-C or the duration budget ended the copy before the source's end. */
  readonly partial: boolean
  readonly sentBytesByTopic: ReadonlyMap<string, number>
  /**
   * Per target, each batch's compressed record bytes / uncompressed record bytes, in batch order (evenly thinned
   * past a few thousand batches); a projection has them, a copy does not.
   */
  readonly batchShares?: ReadonlyMap<string, readonly number[]>
}

const GIB = 1024 ** 3

/** Copies the source into every target's topic, until its end, the budget, the duration or a stop. */
async function copyToTargets(options: CompareRunOptions, admin: Admin): Promise<{ copier: Copier; aborted: boolean }> {
  const { connection, log } = options
  const producer = new Producer(
    { ...options.producer, topicCodecs: Object.fromEntries(options.targets.map((t) => [t.topic, t.spec])) },
    { cluster: createCluster(connection, log), log: log.child({ component: 'copier-producer' }) }
  )
  await producer.start()
  const copyAbort = new AbortController()
  const stop = (): void => copyAbort.abort()
  options.signal?.addEventListener('abort', stop, { once: true })
  const timer = options.durationMs === undefined ? undefined : setTimeout(stop, options.durationMs)
  const sourceCluster = createCluster(connection, log)
  const copyTotal =
    options.onProgress === undefined
      ? undefined
      : await topicRecordCount(admin, options.sourceTopic, options.maxRecords)
  const copier = new Copier(
    {
      sourceTopic: options.sourceTopic,
      groupId: `squeeze-compare.${options.sourceTopic}.${Date.now()}`,
      targets: options.targets,
      // A source batch that cannot be read is left out and counted in the current row (scanSourceBatches), not fatal.
      // Re-batched: each target's batches are what a producer at --linger-ms/--batch-size would write.
      exactlyOnce: false,
      commitIntervalMs: 2000,
      stopAtEnd: true,
      onUnreadable: 'skip',
      batching: 'rebatch',
      ...options.read,
      ...(options.maxRecords === undefined ? {} : { maxRecords: options.maxRecords }),
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes })
    },
    {
      cluster: sourceCluster,
      admin,
      producer,
      log: log.child({ component: 'copier' }),
      onProgress: (s) =>
        options.onProgress?.({
          phase: 'copy',
          done: s.sourceRecords,
          ...(copyTotal === undefined ? {} : { total: copyTotal }),
          unit: 'records'
        })
    }
  )
  // Operators (and the Ctrl-C test) watch for this line: from here on an interrupt still gets a partial report.
  log.info({ sourceTopic: options.sourceTopic, targets: options.targets.length }, 'copy started')
  try {
    await sourceCluster.connect()
    await copier.run(copyAbort.signal)
  } finally {
    if (timer !== undefined) clearTimeout(timer)
    options.signal?.removeEventListener('abort', stop)
    await producer.close()
    await sourceCluster.disconnect().catch(() => undefined)
  }
  return { copier, aborted: copyAbort.signal.aborted }
}

/** Reads every destination back with the measuring consumer; the first target also notes the copied timestamps. */
async function readBackTargets(
  options: CompareRunOptions,
  admin: Admin,
  acked: ReturnType<Copier['ackedBatches']>,
  copiedTimestamps: TimestampSample | undefined
): Promise<CompareTargetResult[]> {
  const results: CompareTargetResult[] = []
  // Whichever target is read first would also pay for V8 compiling the read and decode paths (its decode CPU
  // would be several times the rest's on a small input), so one target is read once, untimed, beforehand.
  const warmUp = options.targets[options.targets.length - 1]
  if (warmUp !== undefined && options.targets.length > 1) {
    options.onProgress?.({
      phase: 'read back',
      detail: 'warm-up',
      done: 0,
      total: options.targets.length,
      unit: 'targets'
    })
    await measureTarget(options, admin, warmUp, [])
  }
  for (const [i, target] of options.targets.entries()) {
    options.onProgress?.({
      phase: 'read back',
      detail: target.topic,
      done: i,
      total: options.targets.length,
      unit: 'targets'
    })
    const result = await measureTarget(
      options,
      admin,
      target,
      acked.filter((b) => b.topic === target.topic),
      i === 0 ? copiedTimestamps : undefined
    )
    results.push(result)
  }
  return results
}

/**
 * The comparison, start to end: copy the source into one fresh topic per target, read every destination back
 * with the measuring consumer, take stored sizes from the broker, check the broker kept every batch, and
 * build the report. Destination topics are removed afterwards unless asked to keep them, and also when
 * anything fails, so a failed run leaves nothing half-made behind.
 */
export async function runCompare(options: CompareRunOptions): Promise<CompareOutcome> {
  const { connection, log } = options
  const kafka = createKafkaClient(connection, log)
  const admin = kafka.admin()
  await admin.connect()
  const created: string[] = []
  try {
    await assertFreshDestinations(admin, options.targets)
    created.push(...(await prepareDestinations(admin, options.sourceTopic, options.targets)))
    const { copier, aborted } = await copyToTargets(options, admin)
    const acked = copier.ackedBatches()
    const [sourceMetadata] = (await admin.fetchTopicMetadata({ topics: [options.sourceTopic] })).topics
    // The copied records' own timestamps: a topic's fallback when its offsets cannot give a rate.
    const copiedTimestamps = options.rateEvidence.kind === 'topic' ? new TimestampSample() : undefined
    const results = await readBackTargets(options, admin, acked, copiedTimestamps)
    const sentBytesByTopic = new Map(results.map((r) => [r.topic, r.sentBytes]))
    const noneStored = results.find((r) => r.codec === 'none')?.storedBytes
    const withBaseline = results.map((r) => ({
      ...r,
      ratioVsNone: noneStored === undefined || r.storedBytes === 0 ? null : noneStored / r.storedBytes
    }))
    const baseline = withBaseline.find((r) => r.codec === 'none') ?? withBaseline[0]
    const uncompressedBytes = baseline?.uncompressedBytes ?? 0
    const bytesPerRecord = baseline === undefined || baseline.records === 0 ? 0 : uncompressedBytes / baseline.records
    options.onProgress?.({ phase: 'ingest rate' })
    const ingestRate = await measureIngestRate(options, admin, bytesPerRecord, copiedTimestamps)
    const replicationFactor = sourceMetadata?.partitions[0]?.replicas.length ?? 1
    const recommendation = recommendFor(withBaseline, options, ingestRate, replicationFactor)
    options.onProgress?.({ phase: 'source batches' })
    // Partitions the copy never reached are not in the range; the rest up to where the copy stopped.
    const copiedUpTo = new Map(
      [...(sourceMetadata?.partitions ?? [])].map((p) => [p.partitionId, copier.copiedUpTo().get(p.partitionId) ?? 0])
    )
    const current = currentBaseline(
      await scanSourceBatches(connection, options.sourceTopic, copiedUpTo, log, options.read),
      {
        targets: withBaseline,
        recommendation,
        ingestRate,
        uncompressedBytesPerRecord: bytesPerRecord,
        replicationFactor,
        consumers: options.consumers,
        lingerMs: options.producer.lingerMs,
        batchSizeBytes: options.producer.batchSizeBytes
      }
    )
    const formats = await formatRowsFor(options, admin, recommendation?.target)
    const report: CompareReport = {
      generatedAt: new Date().toISOString(),
      squeezeVersion: options.version,
      source: {
        kind: options.sourceDescription.kind,
        topic: options.sourceTopic,
        description: options.sourceDescription.description,
        records: copier.snapshot().sourceRecords,
        partitions: sourceMetadata?.partitions.length ?? 0,
        uncompressedBytes,
        ingestRate
      },
      settings: {
        lingerMs: options.producer.lingerMs,
        batchSizeBytes: options.producer.batchSizeBytes,
        replicationFactor,
        consumers: options.consumers
      },
      current,
      targets: withBaseline,
      recommendation,
      ...(formats === undefined ? {} : { formats })
    }
    return { report, partial: aborted, sentBytesByTopic }
  } finally {
    if (!options.keepTopics) {
      const topics = options.targets.map((t) => t.topic).filter((t) => created.includes(t))
      await deleteTopicsAndWait(admin, topics).catch((err: unknown) =>
        log.warn({ err: errorMessage(err), topics }, 'could not delete destination topics')
      )
    }
    await admin.disconnect().catch(() => undefined)
  }
}

/** A comparison into a topic that already holds records would count them too: destinations must be new. */
async function assertFreshDestinations(admin: Admin, targets: readonly CopyTarget[]): Promise<void> {
  const existing = new Set(await admin.listTopics())
  const taken = targets.filter((t) => existing.has(t.topic)).map((t) => t.topic)
  if (taken.length > 0) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `destination topic${taken.length > 1 ? 's' : ''} ${taken.join(', ')} already exist; delete them or choose other names with --destination`
    )
  }
}

/** The source's ingest rate from the evidence the run has; `recordTimestamps` is a topic's fallback. */
export async function measureIngestRate(
  options: Pick<CompareRunOptions, 'rateEvidence' | 'sourceTopic'>,
  admin: Admin,
  bytesPerRecord: number,
  copiedTimestamps: TimestampSample | undefined
): Promise<IngestRate> {
  return startIngestRate(options, admin)(bytesPerRecord, copiedTimestamps)
}

/**
 * measureIngestRate with its broker lookups started now, finished once the bytes per record (and the records'
 * timestamps, the fallback) are known: a projection starts them before its read, so they do not follow it.
 */
export function startIngestRate(
  options: Pick<CompareRunOptions, 'rateEvidence' | 'sourceTopic'>,
  admin: Admin
): (bytesPerRecord: number, copiedTimestamps: TimestampSample | undefined) => Promise<IngestRate> {
  const evidence = options.rateEvidence
  if (evidence.kind === 'sample')
    return async (bytesPerRecord) => rateFromSample(evidence.sample, bytesPerRecord, evidence.source)
  const lookup = topicIngestRateLookup(admin, options.sourceTopic, {
    lookbackMs: evidence.lookbackMs,
    nowMs: Date.now()
  })
  return async (bytesPerRecord, copiedTimestamps) => {
    const fromOffsets = (await lookup)(bytesPerRecord)
    if (isKnownRate(fromOffsets) || copiedTimestamps === undefined) return fromOffsets
    const fromRecords = await rateFromSample(copiedTimestamps, bytesPerRecord, 'record-timestamps')
    return isKnownRate(fromRecords)
      ? fromRecords
      : { unknown: `${fromOffsets.unknown}; copied records: ${fromRecords.unknown}` }
  }
}

/**
 * HTTP sources: the recommended target's batches read back and rebuilt with the records as combined log lines and
 * as JSON (FormatProjection); undefined for other formats, no recommendation, or an adaptive level.
 */
async function formatRowsFor(
  options: CompareRunOptions,
  admin: Admin,
  recommended: string | undefined
): Promise<FormatRow[] | undefined> {
  const target = options.targets.find((t) => formatCodecSpec(t.spec) === recommended)
  if (options.format?.kind !== 'http' || target === undefined || isAdaptive(target.spec)) return undefined
  options.onProgress?.({ phase: 'format rows', detail: target.topic })
  const projection = new FormatProjection(target.spec)
  const cluster = createCluster(options.connection, options.log)
  await cluster.connect()
  try {
    // addBatch is done with a batch's records before it returns.
    const config = { ...DEFAULT_READER_CONFIG, topics: [target.topic], reuseBatchMemory: true }
    const reader = new PartitionReader(config, { cluster, admin, log: options.log })
    await reader.run({
      onBatch: ({ batch }: BatchEvent) => projection.addBatch(batch.records, batch.storedBytes),
      // The target row read the same batches already; one that does not read now is not left out quietly.
      onCorruptBatch: ({ error }) => {
        throw error
      }
    })
  } finally {
    await cluster.disconnect()
  }
  return projection.rows()
}

async function measureTarget(
  options: CompareRunOptions,
  admin: Admin,
  target: CopyTarget,
  acked: readonly AckedBatch[],
  timestamps?: TimestampSample
): Promise<CompareTargetResult> {
  const cluster = createCluster(options.connection, options.log)
  await cluster.connect()
  try {
    const measurements = new TopicMeasurements(() => options.format, options.log.child({ component: 'measure' }))
    const digests: string[] = []
    const stored: StoredBatch[] = []
    // Nothing below keeps a batch past onBatch: headers are copied out, digests computed on the spot.
    const config = { ...DEFAULT_READER_CONFIG, topics: [target.topic], reuseBatchMemory: true, ...options.read }
    const reader = new PartitionReader(config, { cluster, admin, log: options.log })
    await reader.run({
      onBatch: (event: BatchEvent) => {
        measurements.onBatch(event)
        stored.push({ topic: event.topic, partition: event.partition, batch: batchHeader(event.batch) })
        for (const r of event.batch.records) {
          digests.push(recordDigest(event.partition, r.key, r.value, r.timestamp, r.headers))
          timestamps?.add(r.timestamp)
        }
      },
      onCorruptBatch: (event) => measurements.onCorruptBatch(event)
    })
    const measured = measurements.get(target.topic)
    const sizes = await describeLogDirs(cluster, [target.topic])
    return buildResult(
      target.spec,
      target.topic,
      measured,
      acked,
      { perReplica: bytesPerReplica(sizes), allReplicas: bytesAllReplicas(sizes) },
      stored,
      digests
    )
  } finally {
    await cluster.disconnect()
  }
}

function recordDigest(
  partition: number,
  key: Buffer | null,
  value: Buffer | null,
  timestamp: number,
  headers: ReadonlyArray<{ key: string; value: Buffer | null }>
): string {
  const hash = createHash('sha1')
  hash.update(
    `${partition}|${timestamp}|${key === null ? '-' : key.toString('base64')}|${value === null ? '-' : value.toString('base64')}`
  )
  for (const h of headers) hash.update(`|${h.key}=${h.value === null ? '-' : h.value.toString('base64')}`)
  return hash.digest('hex')
}

function buildResult(
  spec: CodecSpec,
  topic: string,
  measured: TopicMeasurement,
  acked: readonly AckedBatch[],
  storedOnDisk: { perReplica: number; allReplicas: number },
  stored: readonly StoredBatch[],
  digests: string[]
): CompareTargetResult {
  const storedBytes = storedOnDisk.perReplica
  const uncompressedBytes = acked.reduce((n, b) => n + b.uncompressedBytes, 0)
  const sentBytes = acked.reduce((n, b) => n + b.sizeBytes, 0)
  const compressCpuSeconds = acked.reduce((n, b) => n + b.compressCpuSeconds, 0)
  const batches = acked.length
  const records = acked.reduce((n, b) => n + b.records, 0)
  const check = checkRecompression(acked, stored)
  const readSeconds = Math.max((measured.lastReadAt - measured.firstReadAt) / 1000, 1e-3)
  digests.sort()
  return {
    target: formatCodecSpec(spec),
    codec: spec.codec,
    level: spec.level,
    topic,
    records: measured.records,
    batches,
    meanRecordsPerBatch: batches === 0 ? 0 : records / batches,
    uncompressedBytes,
    sentBytes,
    storedBytes,
    storedBytesAllReplicas: storedOnDisk.allReplicas,
    ratio: storedBytes === 0 ? 0 : uncompressedBytes / storedBytes,
    ratioVsNone: null,
    compressCpuSeconds,
    compressCpuSecondsPerGiB: uncompressedBytes === 0 ? 0 : compressCpuSeconds / (uncompressedBytes / GIB),
    compressMBPerSecondPerCore: compressCpuSeconds === 0 ? 0 : uncompressedBytes / 1e6 / compressCpuSeconds,
    decompressCpuSeconds: measured.decompressCpuSeconds,
    decompressCpuSecondsPerGiB:
      measured.uncompressedBytes === 0 ? 0 : measured.decompressCpuSeconds / (measured.uncompressedBytes / GIB),
    decodeCpuSecondsPerGiB:
      measured.uncompressedBytes === 0 ? 0 : measured.decodeCpuSeconds / (measured.uncompressedBytes / GIB),
    consumerRecordsPerSecond: measured.records / readSeconds,
    recompression: {
      verdict: check.batchesChecked === 0 ? 'unknown' : check.verdict,
      batchesChecked: check.batchesChecked,
      batchesRewritten: check.batchesRewritten
    },
    digest: createHash('sha256').update(digests.join('\n')).digest('hex'),
    ...(isAdaptive(spec) ? { levelMix: levelMix(acked) } : {})
  }
}

/** The recommendation for measured rows, with the run's budget and target and the source's rate: both modes ask alike. */
export function recommendFor(
  targets: readonly CompareTargetResult[],
  options: Pick<CompareRunOptions, 'consumers' | 'cpuBudgetSecondsPerGiB' | 'targetRatio'>,
  ingestRate: IngestRate,
  replicationFactor: number
): ReturnType<typeof recommend> {
  return recommend(targets, {
    ingressBytesPerSecond: isKnownRate(ingestRate) ? ingestRate.bytesPerSecond : null,
    replicationFactor,
    consumers: options.consumers,
    ...(options.cpuBudgetSecondsPerGiB === undefined ? {} : { cpuBudgetSecondsPerGiB: options.cpuBudgetSecondsPerGiB }),
    ...(options.targetRatio === undefined ? {} : { targetRatio: options.targetRatio })
  })
}
