import type { CodecSpec } from '../codecs/index.js'
import type { SealedBatch } from '../protocol/record-batch-builder.js'

/** Below this many record bytes a round trip to a thread costs more than compressing here. */
export const INLINE_BELOW_BYTES = 16 * 1024
/**
 * Codecs cheap enough that a batch of theirs may compress more cheaply on the event loop than a compression thread
 * can take it. Each goes to the pool while its measured cost per batch exceeds HANDOFF_SECONDS (a large lz4:1
 * batch of text, an LZ4HC level).
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

export function isCheapCodec(spec: CodecSpec): boolean {
  return CHEAP_CODECS.has(spec.codec)
}

/**
 * Whether a batch compresses on the event loop or on a compression thread, from what compression has cost so
 * far: per cheap codec and level, the CPU per record byte of its batches; and, before any thread starts, the
 * compression CPU the event loop spent and the input still announced.
 */
export class SealCostModel {
  /** Per cheap codec and level: compression CPU seconds per record byte, smoothed over its batches. */
  private readonly costPerByte = new Map<string, number>()
  /** Compression CPU seconds spent on the event loop while no thread was started, and the record bytes they sealed. */
  private inlineCpuSeconds = 0
  private inlineBytes = 0
  /**
   * The first inline batch's CPU and bytes: it pays the codec's set-up (its context's memory, first touched), up
   * to several times a later batch's cost, so the cost per byte is measured on the batches after it.
   */
  private setupCpuSeconds = 0
  private setupBytes = 0
  /** The input's bytes in all as expect() told: those sealed here before it was called, plus the bytes announced. */
  private expectedBytes = 0

  /** `inlineSeconds`: compression CPU the event loop spends before the first thread starts (0: at once). */
  constructor(private readonly inlineSeconds: number) {}

  /** Whether a thread starts with the producer: threads are not put off and some codec is not cheap. */
  startsEagerly(specs: readonly CodecSpec[]): boolean {
    return this.inlineSeconds === 0 && specs.some((s) => !isCheapCodec(s))
  }

  /** About `bytes` of input are still to come. */
  expect(bytes: number): void {
    this.expectedBytes = this.inlineBytes + bytes
  }

  /** Whether input was announced: its batches may wait for a booting thread instead of sealing here. */
  announced(): boolean {
    return this.expectedBytes > 0
  }

  /**
   * On the event loop: batches too small to be worth a round trip, and those of a cheap codec whose measured cost
   * per batch is below the round trip's (unmeasured: tried here first, so no thread starts before it is needed).
   */
  sealsInline(recordsBytes: number, spec: CodecSpec): boolean {
    if (spec.codec === 'none' || recordsBytes < INLINE_BELOW_BYTES) return true
    if (!isCheapCodec(spec)) return false
    const perByte = this.costPerByte.get(costKey(spec))
    return perByte === undefined || perByte * recordsBytes < HANDOFF_SECONDS
  }

  /**
   * Until compressing on the event loop has cost inlineSeconds, or the input announced is projected to, a thread
   * would cost more to start than it takes off it.
   */
  holdsOffFirstThread(): boolean {
    return this.projectedCpuSeconds() < this.inlineSeconds
  }

  /**
   * A batch sealed on the event loop while no thread was started. One below INLINE_BELOW_BYTES is left out: it seals
   * here whatever threads run, and its cost per byte (mostly the codec call's own) would project a large input at
   * many times its cost, starting a thread the input does not need.
   */
  sealedBeforeThreads(recordsBytes: number, result: SealedBatch | Error): void {
    if (result instanceof Error || recordsBytes < INLINE_BELOW_BYTES) return
    if (this.inlineBytes === 0) {
      this.setupCpuSeconds = result.compressCpuSeconds
      this.setupBytes = recordsBytes
    }
    this.inlineCpuSeconds += result.compressCpuSeconds
    this.inlineBytes += recordsBytes
  }

  /** A sealed batch of a cheap codec, here or on a thread, updates that codec's cost per byte. */
  measured(spec: CodecSpec, recordsBytes: number, result: SealedBatch | Error): void {
    if (result instanceof Error || !isCheapCodec(spec) || recordsBytes < INLINE_BELOW_BYTES) return
    const key = costKey(spec)
    const latest = result.compressCpuSeconds / recordsBytes
    const previous = this.costPerByte.get(key)
    this.costPerByte.set(key, previous === undefined ? latest : previous + COST_SMOOTHING * (latest - previous))
  }

  /**
   * Compression CPU the input will have cost in all: what the batches sealed here cost, plus the input announced
   * and not sealed yet at their cost per byte after the first batch's set-up; what they cost alone before a second
   * batch, or when no input was announced. Record bytes per input byte are taken as 1: an encoding that grows the
   * input (Cap'n Proto records are larger than the access log's lines) is under-counted, which only starts its thread a
   * batch or two later.
   */
  private projectedCpuSeconds(): number {
    const measuredBytes = this.inlineBytes - this.setupBytes
    if (measuredBytes === 0) return this.inlineCpuSeconds
    const perByte = (this.inlineCpuSeconds - this.setupCpuSeconds) / measuredBytes
    return this.inlineCpuSeconds + perByte * Math.max(0, this.expectedBytes - this.inlineBytes)
  }
}

function costKey(spec: CodecSpec): string {
  return `${spec.codec}:${spec.level ?? ''}`
}
