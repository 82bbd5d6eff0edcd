// The codec and level each batch is sealed with: a topic's own, or for codec:adaptive, its AdaptiveLevel's
// current pick, fed with what the accumulator sees when each batch comes back from compression.
import { isAdaptive, type CodecSpec } from '../codecs/index.js'
import type { Logger } from '../log/logger.js'
import type { ProducerMetrics } from '../metrics/producer-metrics.js'
import type { SealedBatch } from '../protocol/record-batch-builder.js'
import { AdaptiveLevel, missedLinger } from './adaptive-level.js'
import type { SealTiming } from './compression-worker.js'
import type { ProducerConfig, TopicCodecs } from './config.js'

type LevelConfig = Pick<ProducerConfig, 'lingerMs' | 'bufferMemoryBytes' | 'adaptiveLevel' | 'compressionThreads'>

export interface BatchLevelsDeps {
  readonly log: Logger
  readonly metrics?: ProducerMetrics
  readonly clock?: { now(): number }
  /** Compression threads still able to take batches (BatchSealer.threadsLeft); compressionThreads when absent. */
  readonly threadsLeft?: () => number
}

export class BatchLevels {
  private readonly controllers = new Map<string, AdaptiveLevel>()
  private readonly clock: { now(): number }
  /** Uncompressed bytes handed to the sealer and not back yet. */
  private queued = 0
  /**
   * Compression time since the last observation, and when that was: the compression threads' busy share (of all
   * of them). Their wall time as the threads measured it (a thread that waits for a core is not free for the next
   * batch); the CPU time when the event loop compresses.
   */
  private busySeconds = 0
  private windowStart: number | null = null

  constructor(
    private readonly config: LevelConfig,
    private readonly codecs: TopicCodecs,
    private readonly deps: BatchLevelsDeps
  ) {
    this.clock = deps.clock ?? { now: () => Date.now() }
  }

  /** The spec to seal the topic's next batch with, and takes note of the bytes going to compression. */
  sealing(topic: string, uncompressedBytes: number): CodecSpec {
    this.queued += uncompressedBytes
    this.windowStart ??= this.clock.now()
    const spec = this.codecs.spec(topic)
    return isAdaptive(spec) ? this.controller(topic, spec).spec : spec
  }

  /**
   * A batch came back from compression (or failed): feeds the topic's controller, if its level adapts. `timing`
   * is the thread's own account, when a thread sealed it.
   */
  sealed(
    topic: string,
    spec: CodecSpec,
    uncompressedBytes: number,
    closedAt: number,
    bufferedBytes: number,
    result: SealedBatch | Error,
    timing?: SealTiming
  ): void {
    this.queued -= uncompressedBytes
    if (result instanceof Error) return
    // Once every compression thread died the event loop compresses: its CPU is the busy time then, and the dead
    // threads' capacity (idle forever) must not read as room for a higher level.
    const threads = this.deps.threadsLeft?.() ?? this.config.compressionThreads
    const ownThreads = threads > 0
    // With threads, a batch too small for one was sealed on the event loop: it neither waited for nor used a thread.
    this.busySeconds += ownThreads ? (timing?.wallSeconds ?? 0) : result.compressCpuSeconds
    const controller = this.controllers.get(topic)
    if (controller === undefined || spec.level === null) return
    const labels = this.codecs.labels(topic, spec)
    this.deps.metrics?.adaptiveBatch(labels)
    const now = this.clock.now()
    const elapsedSeconds = (now - (this.windowStart ?? now)) / 1000
    // The pool's live threads (or the event loop, compressing inline) could have compressed for this long in all.
    const capacitySeconds = elapsedSeconds * Math.max(1, threads)
    const idleFraction = elapsedSeconds <= 0 ? undefined : Math.max(0, 1 - this.busySeconds / capacitySeconds)
    this.busySeconds = 0
    this.windowStart = now
    // Measured on the thread, so an event loop too busy to take the reply at once does not count as compression's delay.
    const waitedMs = ownThreads ? (timing?.waitedMs ?? 0) : now - closedAt - result.compressCpuSeconds * 1000
    const decision = controller.observe({
      ownThreads,
      bufferedBytes,
      bufferMemoryBytes: this.config.bufferMemoryBytes,
      queuedBytes: this.queued,
      ...(idleFraction === undefined ? {} : { idleFraction }),
      lingerMissed: missedLinger(waitedMs, this.config.lingerMs),
      sealed: {
        level: spec.level,
        compressSecondsPerByte: result.uncompressedBytes > 0 ? result.compressCpuSeconds / result.uncompressedBytes : 0
      }
    })
    if (decision === null) return
    this.deps.metrics?.levelChanged({ topic, codec: spec.codec }, decision.direction, decision.reason)
    this.deps.log.debug({ topic, codec: spec.codec, ...decision }, 'compression level changed')
  }

  private controller(topic: string, spec: CodecSpec): AdaptiveLevel {
    let controller = this.controllers.get(topic)
    if (controller === undefined) {
      controller = new AdaptiveLevel(spec, { ...this.config.adaptiveLevel, clock: this.clock })
      this.controllers.set(topic, controller)
    }
    return controller
  }
}
