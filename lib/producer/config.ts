// The producer's settings, and the codec (and metric labels) each destination topic gets from them.
import { availableParallelism } from 'node:os'
import { resolveCodecSpec, type CodecSpec } from '../codecs/index.js'
import type { BatchLabels } from '../metrics/producer-metrics.js'

/** Producer settings, under Kafka's own names and meanings (see README for where squeeze differs). */
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
  codec: { codec: 'zstd', level: 3 }
}

/** The resolved codec of each destination topic, and its metric labels, each worked out once per topic. */
export class TopicCodecs {
  private readonly specs = new Map<string, CodecSpec>()
  private readonly labelsByTopic = new Map<string, BatchLabels>()

  constructor(private readonly config: Pick<ProducerConfig, 'codec' | 'topicCodecs'>) {
    // Bad codecs and levels fail here, at start-up, not at the first batch.
    for (const spec of [config.codec, ...Object.values(config.topicCodecs ?? {})]) resolveCodecSpec(spec.codec, spec.level)
  }

  spec(topic: string): CodecSpec {
    let spec = this.specs.get(topic)
    if (spec === undefined) {
      const named = this.config.topicCodecs?.[topic] ?? this.config.codec
      spec = resolveCodecSpec(named.codec, named.level)
      this.specs.set(topic, spec)
    }
    return spec
  }

  labels(topic: string): BatchLabels {
    let labels = this.labelsByTopic.get(topic)
    if (labels === undefined) {
      const spec = this.spec(topic)
      labels = { topic, codec: spec.codec, level: spec.level === null ? '' : String(spec.level) }
      this.labelsByTopic.set(topic, labels)
    }
    return labels
  }
}
