// The producer's settings, and the codec (and metric labels) each destination topic gets from them.
import { availableParallelism } from 'node:os'
import { adaptiveCodecSpec, isAdaptive, resolveCodecSpec, type CodecSpec } from '../codecs/index.js'
import type { BatchLabels } from '../metrics/producer-metrics.js'
import { AdaptiveLevel } from './adaptive-level.js'

/** Producer settings, under Kafka's own names and meanings (see docs/usage.md for where squeeze differs). */
export interface ProducerConfig {
  /** linger.ms: how long a batch waits for more records before it is sent. */
  readonly lingerMs: number
  /** batch.size: the most uncompressed bytes in one batch (squeeze applies it before compression). */
  readonly batchSizeBytes: number
  /** buffer.memory: bytes held by open and unacknowledged batches; send() waits above it. */
  readonly bufferMemoryBytes: number
  /** max.request.size: the largest record (and produce request) accepted. */
  readonly maxRequestSizeBytes: number
  readonly acks: -1 | 0 | 1
  /** enable.idempotence: producer id and sequence numbers, so retries never duplicate. */
  readonly idempotent: boolean
  readonly deliveryTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly retryBackoffMs: number
  readonly retryBackoffMaxMs: number
  readonly codec: CodecSpec
  /** Codec per destination topic, overriding `codec`: the copier writes every target through one producer. */
  readonly topicCodecs?: Readonly<Record<string, CodecSpec>>
  /**
   * max.in.flight.requests.per.connection: batches of one partition on the wire at once (1-5). Applies with
   * idempotence only, where the broker's sequence checks keep them in order; otherwise squeeze sends one at a time.
   */
  readonly maxInFlightPerPartition: number
  /**
   * squeeze.compression.threads: how many compression threads (batches of different partitions compress in
   * parallel); 0 compresses on the event loop.
   */
  readonly compressionThreads: number
  /**
   * squeeze.compression.inline.seconds: compression CPU seconds spent on the event loop before the first compression
   * thread starts. A thread costs more to start (its own Node isolate, modules and codec: ~0.15-0.2 CPU s here)
   * than a short run spends compressing in all; 0 starts it with the producer, as codec:adaptive always does (its
   * levels are judged by the threads' load).
   */
  readonly compressionInlineSeconds: number
  /** For codec:adaptive: the levels it moves over (clamped to the codec's), and an optional CPU budget. */
  readonly adaptiveLevel?: AdaptiveLevelSettings
}

export interface AdaptiveLevelSettings {
  /** squeeze.compression.level.min / .max; default 1 and the codec's top useful level (zstd 19, gzip 9, lz4 12). */
  readonly min?: number
  readonly max?: number
  /** squeeze.compression.cpu.budget: CPU seconds per GiB of uncompressed input. */
  readonly cpuBudgetSecondsPerGiB?: number
}

/** One core stays for the event loop (encoding, sending), the rest compress; at least one thread. */
export const DEFAULT_COMPRESSION_THREADS = Math.max(1, availableParallelism() - 1)

export const DEFAULT_PRODUCER_CONFIG: ProducerConfig = {
  lingerMs: 100,
  batchSizeBytes: 1024 * 1024,
  bufferMemoryBytes: 32 * 1024 * 1024,
  maxRequestSizeBytes: 1024 * 1024,
  acks: -1,
  idempotent: true,
  deliveryTimeoutMs: 120_000,
  requestTimeoutMs: 30_000,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  maxInFlightPerPartition: 5,
  compressionThreads: DEFAULT_COMPRESSION_THREADS,
  compressionInlineSeconds: 0.1,
  codec: { codec: 'zstd', level: 3 }
}

type DeadlineSettings = Pick<
  ProducerConfig,
  'lingerMs' | 'deliveryTimeoutMs' | 'requestTimeoutMs' | 'retryBackoffMaxMs'
>

/** What the sender allows a produce request beyond request.timeout.ms (the broker's own wait) before giving up. */
export const REQUEST_TIMEOUT_MARGIN_MS = 5000

/**
 * The longest flush() or close() can wait for every accepted record to be acknowledged or failed: the open batch's
 * linger, then a batch is sent at the latest as its delivery.timeout.ms runs out (the sender sends no batch past
 * it), that request takes at most request.timeout.ms plus the margin, and a retry's backoff ends before the batch
 * is failed.
 */
export function flushDeadlineMs(config: DeadlineSettings): number {
  const { lingerMs, deliveryTimeoutMs, requestTimeoutMs, retryBackoffMaxMs } = config
  return lingerMs + deliveryTimeoutMs + requestTimeoutMs + REQUEST_TIMEOUT_MARGIN_MS + retryBackoffMaxMs
}

/** How long a service's shutdown waits before exiting 1: the flush, plus closing connections and committing. */
export function shutdownDeadlineMs(config: DeadlineSettings): number {
  return flushDeadlineMs(config) + 5000
}

/**
 * The resolved codec of each destination topic, and its metric labels, each worked out once per topic (and
 * level: an adaptive topic's batches are labelled with the level each was compressed at).
 */
export class TopicCodecs {
  private readonly specs = new Map<string, CodecSpec>()
  private readonly labelsByTopic = new Map<string, BatchLabels>()

  constructor(private readonly config: Pick<ProducerConfig, 'codec' | 'topicCodecs' | 'adaptiveLevel'>) {
    // Bad codecs and levels (an adaptive range or budget too) fail here, at start-up, not at the first batch.
    for (const spec of [config.codec, ...Object.values(config.topicCodecs ?? {})]) {
      const resolved = resolve(spec)
      if (isAdaptive(resolved)) new AdaptiveLevel(resolved, { ...config.adaptiveLevel, clock: { now: () => 0 } })
    }
  }

  /** The topic's codec as configured: possibly adaptive, whose batches each get a level of their own. */
  spec(topic: string): CodecSpec {
    let spec = this.specs.get(topic)
    if (spec === undefined) {
      spec = resolve(this.config.topicCodecs?.[topic] ?? this.config.codec)
      this.specs.set(topic, spec)
    }
    return spec
  }

  /** Labels for a batch of the topic sealed with `spec` (the topic's own when not given). */
  labels(topic: string, spec: CodecSpec = this.spec(topic)): BatchLabels {
    const level = spec.level === null ? '' : String(spec.level)
    const key = isAdaptive(this.spec(topic)) ? `${topic}\u0000${level}` : topic
    let labels = this.labelsByTopic.get(key)
    if (labels === undefined) {
      labels = { topic, codec: spec.codec, level }
      this.labelsByTopic.set(key, labels)
    }
    return labels
  }
}

function resolve(spec: CodecSpec): CodecSpec {
  return isAdaptive(spec) ? adaptiveCodecSpec(spec.codec) : resolveCodecSpec(spec.codec, spec.level)
}
