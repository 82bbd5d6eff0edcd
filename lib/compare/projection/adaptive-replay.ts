// codec:adaptive in a projection: the producer's AdaptiveLevel, fed by a replay of the batches at the times their
// records carry, on one simulated compression thread whose work takes what each batch really took to compress.
import type { CodecSpec } from '../../codecs/index.js'
import { AdaptiveLevel, missedLinger } from '../../producer/adaptive-level.js'
import type { AdaptiveLevelSettings } from '../../producer/config.js'
import { DEFAULT_PRODUCER_CONFIG } from '../../producer/config.js'
import { BATCH } from '../../protocol/batch-layout.js'

/** What the replay needs of a batch: its size (records section) and its closing time. */
export interface ReplaySlot {
  readonly start: number
  readonly end: number
  readonly maxTimestamp: number
}

/**
 * Batches close at their last record's time; each waits for the simulated thread, then takes the wall time its
 * compression measured. What the accumulator would observe then (bytes waiting, idle share, a missed linger)
 * goes to the controller, whose level seals the next batch. The answer: the levels adaptive would have used at
 * the rate these records arrived, on one compression thread.
 */
export class AdaptiveReplay {
  /** Slot indices of the current chunk in the order their batches close. */
  order: readonly number[] = []
  /** The level each slot of the current chunk was sealed at, by slot index. */
  levels: number[] = []
  private slots: readonly ReplaySlot[] = []
  /** Made at the first batch's time: the controller starts its hysteresis clock when it is made. */
  private controller: AdaptiveLevel | null = null
  private readonly clock = { ms: 0, now: (): number => this.clock.ms }
  private threadFreeAt = Number.NEGATIVE_INFINITY
  private lastDoneAt: number | null = null

  /** `settings`: the producer's squeeze.compression.level.min / .max and cpu.budget, as its own controller gets them. */
  constructor(
    private readonly target: CodecSpec,
    private readonly lingerMs: number,
    private readonly settings: AdaptiveLevelSettings = {}
  ) {}

  /**
   * The next chunk's batches. The controller, the simulated thread and the clock carry over from the chunks
   * before, as they would in one producer; only batches queued behind a chunk's end go unseen until the next.
   */
  next(slots: readonly ReplaySlot[]): void {
    this.slots = slots
    this.order = slots
      .map((_, i) => i)
      .sort((a, b) => (slots[a] as ReplaySlot).maxTimestamp - (slots[b] as ReplaySlot).maxTimestamp)
    this.levels = new Array<number>(slots.length).fill(0)
    if (this.controller === null && slots.length > 0) {
      this.clock.ms = (slots[this.order[0] as number] as ReplaySlot).maxTimestamp
      this.controller = new AdaptiveLevel(this.target, { ...this.settings, clock: this.clock })
    }
  }

  /** The spec for the next batch in `order`. */
  get spec(): CodecSpec {
    return this.controller?.spec ?? this.target
  }

  /** The batch at `position` in `order` was sealed with `spec` in `seconds`. */
  sealed(position: number, spec: CodecSpec, seconds: number): void {
    const index = this.order[position] as number
    const slot = this.slots[index] as ReplaySlot
    const level = spec.level as number
    this.levels[index] = level
    const bytes = BATCH.HEADER_BYTES + slot.end - slot.start
    const start = Math.max(slot.maxTimestamp, this.threadFreeAt)
    const doneAt = start + seconds * 1000
    this.threadFreeAt = doneAt
    let queued = 0
    for (let k = position + 1; k < this.order.length; k++) {
      const next = this.slots[this.order[k] as number] as ReplaySlot
      if (next.maxTimestamp > doneAt) break
      queued += BATCH.HEADER_BYTES + next.end - next.start
    }
    const window = this.lastDoneAt === null ? null : doneAt - this.lastDoneAt
    this.lastDoneAt = doneAt
    this.clock.ms = doneAt
    this.controller?.observe({
      bufferedBytes: queued + bytes,
      bufferMemoryBytes: DEFAULT_PRODUCER_CONFIG.bufferMemoryBytes,
      queuedBytes: queued,
      ...(window === null || window <= 0 ? {} : { idleFraction: Math.max(0, 1 - (seconds * 1000) / window) }),
      lingerMissed: missedLinger(start - slot.maxTimestamp, this.lingerMs),
      sealed: { level, compressSecondsPerByte: seconds / bytes }
    })
  }
}
