import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { codecCache, type CodecSpec } from '../codecs/index.js'
import type { Logger } from '../log/logger.js'
import { threadCpuSeconds } from '../metrics/thread-cpu.js'
import { BATCH } from '../protocol/batch-layout.js'
import { sealRecords, type OpenBatch, type SealedBatch } from '../protocol/record-batch-builder.js'
import type { CompressionWorkerData, SealReply, SealRequest, SealTiming } from './compression-worker.js'

/** `timing` comes with batches a compression thread sealed; none with those sealed on the event loop. */
export type SealDone = (result: SealedBatch | Error, timing?: SealTiming) => void

/** One compression thread's (or, sealing inline, the event loop's) figures, cumulative since it started. */
export interface ThreadLoad {
  /** Wall seconds the thread held at least one batch, queued on it or being compressed. */
  readonly busySeconds: number
  /** Wall seconds since it started that it held none. */
  readonly idleSeconds: number
  /** CPU seconds it spent sealing: the sum of its batches' compressCpuSeconds. */
  readonly cpuSeconds: number
  readonly batches: number
  /** False once the thread died; its figures stay as they were. */
  readonly alive: boolean
  /** It has loaded its modules and codecs; until then batches are sealed on the event loop or wait for it. */
  readonly ready: boolean
}

/** What an adaptive compression level reads: how far compression is behind, and how busy it is. */
export interface SealerLoad {
  /** Record bytes handed to the compression threads and not sealed yet (waiting, or being compressed). */
  readonly queuedBytes: number
  /** Of those, the bytes no thread has started on: they wait behind another batch. */
  readonly waitingBytes: number
  readonly queuedBatches: number
  /** Every thread started so far, in start order; one entry for the event loop when sealing inline. */
  readonly threads: readonly ThreadLoad[]
}

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
  /** Compression threads that can still take batches (running, or not started yet); 0 once every one died, or sealing inline. */
  threadsLeft(): number
  close(): Promise<void>
}

/** Below this many record bytes a round trip to a thread costs more than compressing here. */
export const INLINE_BELOW_BYTES = 16 * 1024
/**
 * Codecs cheap enough that a batch of theirs may compress more cheaply on the event loop than a compression thread
 * can take it. Each goes to the pool while its measured cost per batch exceeds HANDOFF_SECONDS (a large lz4:1 batch of
 * text, an LZ4HC level).
 */
const CHEAP_CODECS: ReadonlySet<CodecSpec['codec']> = new Set(['none', 'lz4', 'snappy'])
/**
 * What handing a batch to a compression thread costs the producer in CPU, all told: the round trip of a
 * transferred buffer, plus the thread's wake-ups, JIT and heap, as the bench's producer measures it at lz4:1
 * (docs/design.md). A batch that costs more than this to compress goes to the thread: sealed inline, such batches
 * cost the event loop more wall time than the hand-off would.
 */
export const HANDOFF_SECONDS = 0.0012
/** Weight of the newest batch in a codec's cost per byte. */
const COST_SMOOTHING = 0.2
/**
 * Spare builder buffers kept for reuse when the caller gives no count. The producer keeps as many as buffer.memory
 * holds batches, as Java's BufferPool does: a fresh 1 MiB buffer costs more CPU in page faults on first write
 * than lz4:1 spends compressing it.
 */
export const SPARE_BUFFERS = 4

const WORKER_URL = new URL('./compression-worker.js', import.meta.url)

/**
 * `threads` 0 seals on the event loop; N starts up to N compression threads, one more each time a batch
 * finds every running thread busy, the first once `inlineSeconds` of compression CPU were spent on the event
 * loop (0: with the producer). `workerUrl` is for tests that need a thread which misbehaves.
 */
export function createBatchSealer(threads: number, log: Logger, workerUrl: URL = WORKER_URL, spareBuffers: number = SPARE_BUFFERS, inlineSeconds = 0): BatchSealer {
  return threads > 0 ? new PoolSealer(threads, log, workerUrl, spareBuffers, inlineSeconds) : new InlineSealer(spareBuffers)
}

abstract class RecyclingSealer implements BatchSealer {
  private readonly codec = codecCache()
  private readonly spares: Buffer[] = []
  /** Buffers this sealer handed out: only these may be recycled or transferred to another thread. */
  protected readonly owned = new WeakSet<ArrayBufferLike>()

  constructor(private readonly spareBuffers: number) {}

  abstract seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void
  abstract load(): SealerLoad
  abstract threadsLeft(): number

  buffer(size: number): Buffer {
    const spare = this.spares.pop()
    if (spare !== undefined && spare.length === size) return spare
    const fresh = Buffer.allocUnsafeSlow(size)
    this.owned.add(fresh.buffer)
    return fresh
  }

  start(_specs: readonly CodecSpec[]): void {}

  expect(_bytes: number): void {}

  async close(): Promise<void> {}

  /** The records' backing buffer when this sealer handed it out (so it may be recycled or transferred), else null. */
  protected ownedBacking(records: Uint8Array): ArrayBuffer | null {
    const backing = records.buffer
    return this.owned.has(backing) && backing instanceof ArrayBuffer ? backing : null
  }

  protected recycle(buffer: ArrayBuffer): void {
    if (this.spares.length < this.spareBuffers) this.spares.push(Buffer.from(buffer))
  }

  protected sealHere(batch: OpenBatch, spec: CodecSpec, cpuSeconds?: () => number): SealedBatch | Error {
    let result: SealedBatch | Error
    try {
      result = sealRecords(batch, this.codec(spec), Buffer.allocUnsafe, cpuSeconds)
    } catch (err) {
      result = err instanceof Error ? err : new Error(String(err))
    }
    const backing = this.ownedBacking(batch.records)
    if (backing !== null) this.recycle(backing)
    return result
  }
}

class InlineSealer extends RecyclingSealer {
  private readonly startedAt = performance.now()
  private busyMs = 0
  private cpuSeconds = 0
  private batches = 0

  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    const t0 = performance.now()
    const result = this.sealHere(batch, spec)
    this.busyMs += performance.now() - t0
    if (!(result instanceof Error)) {
      this.cpuSeconds += result.compressCpuSeconds
      this.batches++
    }
    done(result)
  }

  load(): SealerLoad {
    const busySeconds = this.busyMs / 1000
    const thread: ThreadLoad = { busySeconds, idleSeconds: (performance.now() - this.startedAt) / 1000 - busySeconds, cpuSeconds: this.cpuSeconds, batches: this.batches, alive: true, ready: true }
    return { queuedBytes: 0, waitingBytes: 0, queuedBatches: 0, threads: [thread] }
  }

  threadsLeft(): number {
    return 0
  }
}

interface InFlightSeal {
  readonly count: number
  readonly recordsBytes: number
  readonly firstTimestamp: number
  readonly done: SealDone
  /**
   * A batch given to a thread still booting, not posted yet: it waits here, and goes to the thread when the thread
   * is ready, or is sealed elsewhere if the thread dies before that (it may never boot: no thread can be created,
   * its module cannot load).
   */
  readonly kept?: { readonly batch: OpenBatch; readonly spec: CodecSpec; readonly givenAtMs: number }
}

interface PoolThread {
  /** 1-based, for messages: "compression thread 2 of 3". */
  readonly number: number
  readonly worker: Worker
  readonly startedAt: number
  /** Its modules and codecs are loaded: until then it takes no batch. */
  ready: boolean
  /** This thread's batches by request id, in the order it seals them. */
  readonly inFlight: Map<number, InFlightSeal>
  queuedBytes: number
  /** When it last went from holding no batch to holding one; null while it holds none. */
  busySince: number | null
  busyMs: number
  cpuSeconds: number
  batches: number
  alive: boolean
}

/**
 * Up to `size` compression threads. A batch goes to an idle thread, to a new one while fewer than `size` run,
 * else to the thread with the fewest bytes queued. While no thread is ready (one boots in 0.1-0.2 s, loading its
 * modules and codec), batches are sealed on the event loop: a short run would otherwise wait for the boot. The
 * builder's buffer is transferred (no copy) and comes back with the sealed batch for the next builder. A thread
 * that dies fails the batches it held with one clear error (counted, reported to onDeliveryFailure) and is not
 * replaced; when none is left, batches are sealed inline.
 */
class PoolSealer extends RecyclingSealer {
  private readonly threads: PoolThread[] = []
  /** Per cheap codec and level: compression CPU seconds per record byte, smoothed over its batches. */
  private readonly costPerByte = new Map<string, number>()
  private nextId = 0
  private closing = false
  /** The codecs a new thread loads before it is ready. */
  private preload: readonly CodecSpec[] = []

  /** Compression CPU seconds spent on the event loop while no thread was started, and the record bytes they sealed. */
  private inlineCpuSeconds = 0
  private inlineBytes = 0
  /**
   * The first inline batch's CPU and bytes: it pays the codec's set-up (its context's memory, first touched), up
   * to several times a later batch's cost, so the cost per byte is measured on the batches after it.
   */
  private setupCpuSeconds = 0
  private setupBytes = 0
  /** The input's bytes in all as far as expect() told: those sealed here before it was called, plus the bytes announced. */
  private expectedBytes = 0

  constructor(private readonly size: number, private readonly log: Logger, private readonly workerUrl: URL, spareBuffers: number, private readonly inlineSeconds: number) {
    super(spareBuffers)
  }

  seal(batch: OpenBatch, spec: CodecSpec, done: SealDone): void {
    const thread = this.sealsInline(batch, spec) ? null : this.pick()
    if (thread === null) {
      // Beside a thread that is compressing or booting, the process's CPU would count that thread's too.
      const result = this.sealHere(batch, spec, this.threads.some((t) => t.alive && (!t.ready || t.inFlight.size > 0)) ? threadCpuSeconds : undefined)
      this.measured(spec, batch.records.byteLength, result)
      if (this.threads.length === 0 && !(result instanceof Error)) {
        if (this.inlineBytes === 0) {
          this.setupCpuSeconds = result.compressCpuSeconds
          this.setupBytes = batch.records.byteLength
        }
        this.inlineCpuSeconds += result.compressCpuSeconds
        this.inlineBytes += batch.records.byteLength
      }
      done(result)
      return
    }
    const recordsBytes = batch.records.byteLength
    const measuredDone: SealDone = CHEAP_CODECS.has(spec.codec) ? (result) => {
      this.measured(spec, recordsBytes, result)
      done(result)
    } : done
    const id = this.nextId++
    if (thread.inFlight.size === 0) {
      // Referenced while it holds batches, so the process cannot exit with records still being compressed.
      thread.worker.ref()
      thread.busySince = performance.now()
    }
    const inFlight: InFlightSeal = { count: batch.count, recordsBytes, firstTimestamp: batch.firstTimestamp, done: measuredDone }
    thread.queuedBytes += recordsBytes
    if (thread.ready) {
      thread.inFlight.set(id, inFlight)
      this.post(thread, id, batch, spec, Date.now())
    } else {
      // Not posted as a copy (the batch must stay here until the thread is ready): each fresh MiB costs the event
      // loop its page faults, and a copy would make one per batch while the thread boots.
      // A batch whose memory this sealer does not own (a copied batch read into a reused buffer) is kept as a copy.
      const owned = this.ownedBacking(batch.records) !== null
      const keptBatch = owned ? batch : { ...batch, records: new Uint8Array(batch.records) }
      thread.inFlight.set(id, { ...inFlight, kept: { batch: keptBatch, spec, givenAtMs: Date.now() } })
    }
  }

  /** `givenAtMs`: when the batch was given to the thread, so its wait for the thread counts from then, boot included. */
  private post(thread: PoolThread, id: number, batch: OpenBatch, spec: CodecSpec, givenAtMs: number): void {
    // A buffer this sealer did not hand out may be shared (Node's pool): send a copy.
    const records = this.ownedBacking(batch.records) !== null ? batch.records : new Uint8Array(batch.records)
    const request: SealRequest = { id, spec, batch: { ...batch, records }, postedAtMs: givenAtMs }
    thread.worker.postMessage(request, [records.buffer as ArrayBuffer])
  }

  override start(specs: readonly CodecSpec[]): void {
    this.preload = specs.filter((s) => s.codec !== 'none')
    if (this.threads.length === 0 && this.inlineSeconds === 0 && specs.some((s) => !CHEAP_CODECS.has(s.codec))) this.startThread()
  }

  override expect(bytes: number): void {
    this.expectedBytes = this.inlineBytes + bytes
  }

  load(): SealerLoad {
    const now = performance.now()
    let queuedBytes = 0
    let waitingBytes = 0
    let queuedBatches = 0
    const threads = this.threads.map((t): ThreadLoad => {
      queuedBytes += t.queuedBytes
      queuedBatches += t.inFlight.size
      const head = t.inFlight.values().next().value
      waitingBytes += t.queuedBytes - (head?.recordsBytes ?? 0)
      const busySeconds = (t.busyMs + (t.busySince === null ? 0 : now - t.busySince)) / 1000
      return { busySeconds, idleSeconds: (now - t.startedAt) / 1000 - busySeconds, cpuSeconds: t.cpuSeconds, batches: t.batches, alive: t.alive, ready: t.ready }
    })
    return { queuedBytes, waitingBytes, queuedBatches, threads }
  }

  threadsLeft(): number {
    return this.size - this.threads.filter((t) => !t.alive).length
  }

  override async close(): Promise<void> {
    this.closing = true
    await Promise.all(this.threads.map((t) => t.worker.terminate()))
  }

  /**
   * On the event loop: batches too small to be worth a round trip, and those of a cheap codec whose measured cost
   * per batch is below the round trip's (unmeasured: tried here first, so no thread starts before it is needed).
   */
  private sealsInline(batch: OpenBatch, spec: CodecSpec): boolean {
    if (spec.codec === 'none' || batch.records.byteLength < INLINE_BELOW_BYTES) return true
    if (!CHEAP_CODECS.has(spec.codec)) return false
    const perByte = this.costPerByte.get(costKey(spec))
    return perByte === undefined || perByte * batch.records.byteLength < HANDOFF_SECONDS
  }

  /**
   * Compression CPU the input will have cost in all: what the batches sealed here cost, plus the input announced and
   * not sealed yet at their cost per byte after the first batch's set-up; what they cost alone before a second batch,
   * or when no input was announced. Record bytes per input byte are taken as 1: an encoding that grows the input
   * (Cap'n Proto records are larger than the access log's lines) is under-counted, which only starts its thread a batch or two later.
   */
  private projectedCpuSeconds(): number {
    const measuredBytes = this.inlineBytes - this.setupBytes
    if (measuredBytes === 0) return this.inlineCpuSeconds
    const perByte = (this.inlineCpuSeconds - this.setupCpuSeconds) / measuredBytes
    return this.inlineCpuSeconds + perByte * Math.max(0, this.expectedBytes - this.inlineBytes)
  }

  private measured(spec: CodecSpec, recordsBytes: number, result: SealedBatch | Error): void {
    if (result instanceof Error || !CHEAP_CODECS.has(spec.codec) || recordsBytes < INLINE_BELOW_BYTES) return
    const key = costKey(spec)
    const latest = result.compressCpuSeconds / recordsBytes
    const previous = this.costPerByte.get(key)
    this.costPerByte.set(key, previous === undefined ? latest : previous + COST_SMOOTHING * (latest - previous))
  }

  /**
   * The thread for the next batch, or null to seal it here: none started yet while inline compression is cheaper,
   * every thread died, or none is ready yet (the first boots) and no input was announced. A new thread starts when every running one is busy,
   * while fewer than `size` were started; once one thread is ready, a booting one takes batches (they wait for it
   * as they would behind a busy one).
   */
  private pick(): PoolThread | null {
    // Until compressing on the event loop has cost inlineSeconds, or the input announced is projected to, a thread
    // would cost more to start than it takes off it.
    if (this.threads.length === 0 && this.projectedCpuSeconds() < this.inlineSeconds) return null
    let best: PoolThread | null = null
    let anyReady = false
    for (const t of this.threads) {
      if (!t.alive) continue
      anyReady ||= t.ready
      if (best === null || t.queuedBytes < best.queuedBytes) best = t
    }
    // An announced input keeps its batches off the event loop while the thread boots: the run is long enough to
    // wait for it, and the event loop, which reads and parses that input, is its bottleneck.
    const waitForBoot = anyReady || this.expectedBytes > 0
    if ((best === null || best.queuedBytes > 0) && this.threads.length < this.size) {
      const started = this.startThread()
      return waitForBoot ? started : null
    }
    return waitForBoot ? best : null
  }

  private startThread(): PoolThread {
    // Named, so `top -H` and /proc/PID/task/*/comm show which threads compress.
    const workerData: CompressionWorkerData = { thread: this.threads.length, preload: this.preload }
    const worker = new Worker(this.workerUrl, { name: `compression-${this.threads.length + 1}`, workerData })
    worker.unref()
    const thread: PoolThread = {
      number: this.threads.length + 1, worker, startedAt: performance.now(), ready: false, inFlight: new Map(),
      queuedBytes: 0, busySince: null, busyMs: 0, cpuSeconds: 0, batches: 0, alive: true
    }
    worker.on('message', (reply: SealReply) => this.onReply(thread, reply))
    worker.on('error', (err) => this.fail(thread, `failed: ${err.message}`))
    worker.on('exit', (code) => this.fail(thread, `exited with code ${code}`))
    this.threads.push(thread)
    return thread
  }

  private onReply(thread: PoolThread, reply: SealReply): void {
    if ('ready' in reply) {
      thread.ready = true
      // The batches that waited for it, in the order they were given: from here on they are the thread's.
      for (const [id, pending] of thread.inFlight) {
        if (pending.kept === undefined) continue
        const { kept, ...posted } = pending
        thread.inFlight.set(id, posted)
        this.post(thread, id, kept.batch, kept.spec, kept.givenAtMs)
      }
      return
    }
    const pending = thread.inFlight.get(reply.id)
    if (pending === undefined) return
    thread.inFlight.delete(reply.id)
    thread.queuedBytes -= pending.recordsBytes
    if (thread.inFlight.size === 0) this.idle(thread)
    if ('error' in reply) {
      pending.done(new Error(reply.error))
      return
    }
    thread.cpuSeconds += reply.compressCpuSeconds
    thread.batches++
    this.owned.add(reply.records)
    this.recycle(reply.records)
    pending.done({
      bytes: Buffer.from(reply.bytes),
      recordCount: pending.count,
      uncompressedBytes: BATCH.HEADER_BYTES + pending.recordsBytes,
      compressCpuSeconds: reply.compressCpuSeconds,
      firstTimestamp: pending.firstTimestamp
    }, reply.timing)
  }

  private idle(thread: PoolThread): void {
    thread.worker.unref()
    if (thread.busySince !== null) thread.busyMs += performance.now() - thread.busySince
    thread.busySince = null
  }

  private fail(thread: PoolThread, what: string): void {
    if (!thread.alive || this.closing) return
    thread.alive = false
    const reason = `compression thread ${thread.number} of ${this.size} ${what}`
    const left = this.threadsLeft()
    const pending = [...thread.inFlight.values()]
    thread.inFlight.clear()
    thread.queuedBytes = 0
    this.idle(thread)
    this.log.warn({ batches: pending.length, threadsLeft: left }, `${reason}; ${left > 0 ? 'the other threads go on' : 'compressing on the event loop from now on'}`)
    for (const p of pending) {
      if (p.kept === undefined) p.done(new Error(reason))
      else this.seal(p.kept.batch, p.kept.spec, p.done)
    }
  }
}

function costKey(spec: CodecSpec): string {
  return `${spec.codec}:${spec.level ?? ''}`
}
