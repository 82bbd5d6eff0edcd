import { performance } from 'node:perf_hooks'
import type { CodecSpec } from '../codecs/index.js'
import type { Logger } from '../log/logger.js'
import { threadCpuSeconds } from '../metrics/thread-cpu.js'
import type { OpenBatch } from '../protocol/record-batch-builder.js'
import { CompressionPool, type PoolThread, type Reseal } from './compression-pool.js'
import { SealBuffers, SPARE_BUFFERS } from './seal-buffers.js'
import { isCheapCodec, SealCostModel } from './seal-cost-model.js'
import type { SealDone, SealerLoad, ThreadLoad } from './seal-load.js'

export { HANDOFF_SECONDS, INLINE_BELOW_BYTES } from './seal-cost-model.js'
export { SPARE_BUFFERS } from './seal-buffers.js'
export type { SealDone, SealerLoad, ThreadLoad } from './seal-load.js'

/**
 * Compresses finished batches, and recycles the builders' buffers. On the event loop, compressing batch N
 * blocks encoding batch N+1 and handling acknowledgements; on compression threads they overlap, and batches
 * (of any partition) compress in parallel. A partition's batches leave in order whatever order they finish
 * in: each takes its place in its partition queue when closed, and sequence numbers are stamped at send.
 * Fresh 1 MiB buffers cost page faults and GC on every batch, hence the recycling.
 */
export interface BatchSealer {
  /**
   * Starts the first compression thread ahead of the first batch, unless every codec in `specs` seals inline or the
   * first thread waits for inline compression to cost enough.
   */
  start(specs: readonly CodecSpec[]): void
  /**
   * About `bytes` of input are still to come (a file of known size): the first thread, put off until inline
   * compression has cost enough, starts as soon as their compression is projected to cost that much.
   */
  expect(bytes: number): void
  /** A buffer for a new batch builder: a recycled one when there is one of this size. */
  buffer(size: number): Buffer
  /** Calls `done` with the sealed batch, or the codec's error; synchronously when sealing inline. */
  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void
  load(): SealerLoad
  /**
   * Compression threads that can still take batches (running, or not started yet); 0 once every one died, or
   * sealing inline.
   */
  threadsLeft(): number
  close(): Promise<void>
}

const WORKER_URL = new URL('./compression-worker.js', import.meta.url)

/**
 * `threads` 0 seals on the event loop; N starts up to N compression threads, one more each time a batch
 * finds every running thread busy, the first once `inlineSeconds` of compression CPU were spent on the event
 * loop (0: with the producer). `workerUrl` is for tests that need a thread which misbehaves.
 */
export function createBatchSealer(
  threads: number,
  log: Logger,
  workerUrl: URL = WORKER_URL,
  spareBuffers: number = SPARE_BUFFERS,
  inlineSeconds = 0
): BatchSealer {
  const buffers = new SealBuffers(spareBuffers)
  return threads > 0
    ? new PoolSealer(
        new SealCostModel(inlineSeconds),
        buffers,
        (reseal) => new CompressionPool(threads, log, workerUrl, buffers, reseal)
      )
    : new InlineSealer(buffers)
}

class InlineSealer implements BatchSealer {
  private readonly startedAt = performance.now()
  private busyMs = 0
  private cpuSeconds = 0
  private batches = 0

  constructor(private readonly buffers: SealBuffers) {}

  start(): void {}

  expect(): void {}

  buffer(size: number): Buffer {
    return this.buffers.buffer(size)
  }

  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    const t0 = performance.now()
    const result = this.buffers.sealHere(batch, spec)
    this.busyMs += performance.now() - t0
    if (!(result instanceof Error)) {
      this.cpuSeconds += result.compressCpuSeconds
      this.batches++
    }
    done(result)
  }

  load(): SealerLoad {
    const busySeconds = this.busyMs / 1000
    const idleSeconds = (performance.now() - this.startedAt) / 1000 - busySeconds
    const thread: ThreadLoad = {
      busySeconds,
      idleSeconds,
      cpuSeconds: this.cpuSeconds,
      batches: this.batches,
      alive: true,
      ready: true
    }
    return { queuedBytes: 0, waitingBytes: 0, queuedBatches: 0, threads: [thread] }
  }

  threadsLeft(): number {
    return 0
  }

  async close(): Promise<void> {}
}

/**
 * Seals each batch on the event loop or on a compression thread, as the cost model says. A batch goes to an idle
 * thread, to a new one while fewer than the pool's size run, else to the thread with the fewest bytes queued. While
 * no thread is ready (one boots in a fraction of a second, loading its modules and codec), batches are sealed on
 * the event loop: a short run would otherwise wait for the boot. When every thread died, batches are sealed inline.
 */
class PoolSealer implements BatchSealer {
  private readonly pool: CompressionPool

  constructor(
    private readonly cost: SealCostModel,
    private readonly buffers: SealBuffers,
    createPool: (reseal: Reseal) => CompressionPool
  ) {
    this.pool = createPool((batch, spec, done) => this.seal(batch, spec, done))
  }

  buffer(size: number): Buffer {
    return this.buffers.buffer(size)
  }

  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    const recordsBytes = batch.records.byteLength
    const thread = this.cost.sealsInline(recordsBytes, spec) ? null : this.pick()
    if (thread === null) {
      this.sealHere(batch, spec, done)
      return
    }
    const measuredDone: SealDone = isCheapCodec(spec)
      ? (result) => {
          this.cost.measured(spec, recordsBytes, result)
          done(result)
        }
      : done
    this.pool.give(thread, batch, spec, measuredDone)
  }

  start(specs: readonly CodecSpec[]): void {
    this.pool.preloading(specs)
    if (this.pool.started === 0 && this.cost.startsEagerly(specs)) this.pool.startThread()
  }

  expect(bytes: number): void {
    this.cost.expect(bytes)
  }

  load(): SealerLoad {
    return this.pool.load()
  }

  threadsLeft(): number {
    return this.pool.threadsLeft()
  }

  async close(): Promise<void> {
    await this.pool.close()
  }

  private sealHere(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    const recordsBytes = batch.records.byteLength
    // Beside a thread that is compressing or booting, the process's CPU would count that thread's too.
    const result = this.buffers.sealHere(batch, spec, this.pool.busy() ? threadCpuSeconds : undefined)
    this.cost.measured(spec, recordsBytes, result)
    if (this.pool.started === 0) this.cost.sealedBeforeThreads(recordsBytes, result)
    done(result)
  }

  /**
   * The thread for the next batch, or null to seal it here: none started yet while inline compression is cheaper,
   * every thread died, or none is ready yet (the first boots) and no input was announced. A new thread starts when
   * every running one is busy, while fewer than the pool's size were started; once one thread is ready, a booting
   * one takes batches (they wait for it as they would behind a busy one).
   */
  private pick(): PoolThread | null {
    if (this.pool.started === 0 && this.cost.holdsOffFirstThread()) return null
    const { best, anyReady } = this.pool.leastQueued()
    // An announced input keeps its batches off the event loop while the thread boots: the run is long enough to
    // wait for it, and the event loop, which reads and parses that input, is its bottleneck.
    const waitForBoot = anyReady || this.cost.announced()
    if ((best === null || best.queuedBytes > 0) && this.pool.canStart()) {
      const started = this.pool.startThread()
      return waitForBoot ? started : null
    }
    return waitForBoot ? best : null
  }
}
