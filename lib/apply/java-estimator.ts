import { BATCH } from '../protocol/batch-layout.js'

/**
 * A model of how Kafka's Java producer sizes compressed batches (kafka-clients' CompressionRatioEstimator,
 * MemoryRecordsBuilder and ProducerBatch). Java's batch.size bounds an estimate of the compressed batch: the
 * batch header plus the uncompressed record bytes x the topic's estimated ratio x 1.05. The estimate is kept per
 * topic and codec for the producer's life; it starts at 1, and each closed batch moves it: a batch that compressed
 * worse than estimated raises it by at least 0.05 (to the observed ratio if that is higher), a better one lowers it
 * by 0.005 but not below the observed ratio. Ratios here are compressed / uncompressed, as Java keeps them.
 */

/** CompressionRatioEstimator.COMPRESSION_RATIO_IMPROVING_STEP. */
export const JAVA_IMPROVING_STEP = 0.005
/** CompressionRatioEstimator.COMPRESSION_RATIO_DETERIORATE_STEP. */
export const JAVA_DETERIORATE_STEP = 0.05
/** MemoryRecordsBuilder.COMPRESSION_RATE_ESTIMATION_FACTOR. */
export const JAVA_ESTIMATION_FACTOR = 1.05
/** The v2 record batch header, which Java counts uncompressed. */
export const JAVA_BATCH_HEADER_BYTES = BATCH.HEADER_BYTES
/** CompressionType's initial rate for every codec. */
export const JAVA_INITIAL_ESTIMATE = 1
/**
 * Batches buffer.memory holds besides one open batch per partition (see javaBufferMemory): as many as the
 * producer's max.in.flight.requests.per.connection default, each request carrying one batch per partition.
 */
export const JAVA_UNDRAINED_BATCHES = 5
/**
 * How many batches the estimate a new batch opens at lags behind. A batch's ratio reaches the estimate when the
 * sender drains it (ProducerBatch.close), and the sender sees a batch as ready only once the next one is open, so
 * a batch opens before its predecessor is drained: one batch. Batches in flight are drained already, and the
 * bounded buffer.memory keeps a second closed batch from waiting undrained.
 */
export const JAVA_LAG_BATCHES = 1

/** What a producer run looks like to the estimator. */
export interface JavaRun {
  /** Records the producer writes: the length of the run simulated. */
  readonly records: number
  /** Mean bytes of one record as a batch holds it (framing included, batch header not). */
  readonly recordBytes: number
  /** Per batch, in order, its compressed record bytes / uncompressed record bytes; repeated as often as needed. */
  readonly compressedShares: readonly number[]
}

export interface JavaBatching {
  readonly batches: number
  /** Mean uncompressed bytes per batch, header included (as squeeze's batch.size counts them). */
  readonly meanBatchBytes: number
  readonly finalEstimate: number
}

/** The estimate after a batch that compressed to `observed`, in Java's float arithmetic. */
export function nextJavaEstimate(estimate: number, observed: number): number {
  const e = Math.fround(estimate)
  const o = Math.fround(observed)
  if (o > e) return Math.max(Math.fround(e + Math.fround(JAVA_DETERIORATE_STEP)), o)
  if (o < e) return Math.max(Math.fround(e - Math.fround(JAVA_IMPROVING_STEP)), o)
  return e
}

/**
 * Records Java puts in one batch at `estimate`: the first always, then one more while the estimated batch plus
 * the next record's uncompressed size fits in batch.size (MemoryRecordsBuilder.hasRoomFor).
 */
export function javaRecordsPerBatch(batchSize: number, recordBytes: number, estimate: number): number {
  const room = batchSize - JAVA_BATCH_HEADER_BYTES - recordBytes
  const perRecord = recordBytes * estimate * JAVA_ESTIMATION_FACTOR
  if (room < 0 || !(perRecord > 0)) return 1
  // The largest k with trunc(k x perRecord) <= room, i.e. k x perRecord < room + 1.
  return Math.ceil((Math.floor(room) + 1) / perRecord)
}

/**
 * Java's batches over `run` at `batchSize`, the estimate carried from batch to batch as one producer carries it.
 * A batch's ratio reaches the estimate when the sender drains it, so a batch opens at the estimate that stood
 * `lagBatches` batches earlier (0: the sender keeps up). At most `maxBatches` are simulated.
 */
export function simulateJavaBatching(
  batchSize: number,
  run: JavaRun,
  lagBatches = 0,
  maxBatches = 1_000_000
): JavaBatching {
  const shares = run.compressedShares
  // The estimate after each batch so far, the newest last; only the last lagBatches + 1 are kept.
  const history = [JAVA_INITIAL_ESTIMATE]
  let left = run.records
  let batches = 0
  let bytes = 0
  while (left > 0 && batches < maxBatches) {
    const opensAt = history[Math.max(0, history.length - 1 - lagBatches)] as number
    const n = Math.min(left, javaRecordsPerBatch(batchSize, run.recordBytes, opensAt))
    bytes += JAVA_BATCH_HEADER_BYTES + n * run.recordBytes
    left -= n
    const latest = history[history.length - 1] as number
    history.push(shares.length > 0 ? nextJavaEstimate(latest, shares[batches % shares.length] as number) : latest)
    if (history.length > lagBatches + 1) history.shift()
    batches += 1
  }
  const finalEstimate = history[history.length - 1] as number
  return { batches, meanBatchBytes: batches === 0 ? 0 : bytes / batches, finalEstimate }
}

/**
 * buffer.memory that bounds how far Java's producer runs ahead of its sender: one batch.size buffer per open
 * partition batch and JAVA_UNDRAINED_BATCHES more. With the default 32 MiB a producer faster than its broker
 * fills hundreds of batches at the starting estimate before any ratio is fed back, and how many depends on the
 * broker's speed; bounded, the batches are the simulated ones.
 */
export function javaBufferMemory(batchSize: number, partitions: number): number {
  return (Math.max(1, partitions) + JAVA_UNDRAINED_BATCHES) * batchSize
}

/**
 * The smallest batch.size at which Java's batches over `run` average at least `meanBatchBytes` uncompressed:
 * the early batches, made while the estimate comes down from 1, are smaller, so later ones are made larger.
 * `lagBatches` as simulateJavaBatching takes it.
 */
export function javaBatchSizeFor(meanBatchBytes: number, run: JavaRun, lagBatches = 0): number {
  const worst = Math.max(JAVA_INITIAL_ESTIMATE, ...run.compressedShares) + JAVA_DETERIORATE_STEP
  let lo = JAVA_BATCH_HEADER_BYTES + 1
  let hi = Math.ceil(meanBatchBytes * JAVA_ESTIMATION_FACTOR * worst + JAVA_BATCH_HEADER_BYTES + 2 * run.recordBytes)
  if (run.records <= 0 || simulateJavaBatching(hi, run, lagBatches).meanBatchBytes < meanBatchBytes) return hi
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    if (simulateJavaBatching(mid, run, lagBatches).meanBatchBytes >= meanBatchBytes) hi = mid
    else lo = mid + 1
  }
  return lo
}
