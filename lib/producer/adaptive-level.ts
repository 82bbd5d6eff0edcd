// Picks the compression level of each batch from what the producer can afford: pure, driven by observations
// and an injected clock, so its hysteresis and budget logic are unit-tested without a broker or real time.
import { ADAPTIVE_RANGES, LEVEL_RANGES, formatCodecSpec, type CodecName, type CodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'

/**
 * What the producer knows when a batch comes back from compression. Every source of these (today's single
 * compression thread, or a pool) fills the same fields; the optional ones are left out where unknown.
 */
export interface LevelSignals {
  /** buffer.memory bytes held by open, compressing and unacknowledged batches, and the limit. */
  readonly bufferedBytes: number
  readonly bufferMemoryBytes: number
  /** Uncompressed bytes handed to compression and not back yet (this batch excluded). */
  readonly queuedBytes: number
  /** Share of the compression threads' time spent idle since the previous observation, 0..1. */
  readonly idleFraction?: number
  /** The batch waited for compression longer than linger.ms: its send deadline was missed. */
  readonly lingerMissed: boolean
  /**
   * Compression runs on threads of its own, apart from the event loop that fills and drains buffer.memory. Then a
   * full buffer is compression's doing only while the threads are busy: filled by an event loop or a network
   * that cannot keep up, a lower level would not empty it, and idle threads may take a higher one. Left out (the
   * event loop compresses): every full buffer counts, and the level goes up only while the buffer is nearly empty.
   */
  readonly ownThreads?: boolean
  /** The batch just sealed: the level it was compressed at and its CPU seconds per uncompressed byte. */
  readonly sealed?: { readonly level: number; readonly compressSecondsPerByte: number }
}

export type LevelChangeReason = 'buffer' | 'linger' | 'idle' | 'budget'

export interface LevelDecision {
  readonly from: number
  readonly to: number
  readonly direction: 'up' | 'down'
  readonly reason: LevelChangeReason
}

export interface AdaptiveLevelOptions {
  readonly min?: number
  readonly max?: number
  /** CPU seconds per GiB of uncompressed input: the highest level whose measured cost fits wins. */
  readonly cpuBudgetSecondsPerGiB?: number
  readonly clock: { now(): number }
}

/** buffer.memory share from which the producer counts as falling behind, and below which it may count as keeping up. */
const BEHIND_BUFFER = 0.5
const AHEAD_BUFFER = 0.25
/** buffer.memory share that may wait for compression while keeping up (a batch or two of other partitions). */
const AHEAD_QUEUED = 0.1
/** From here a single step down is too slow: jump half-way to the minimum. */
const SEVERE_BUFFER = 0.8
/** Idle share the compression threads must keep (smoothed) before the level goes up... */
const AHEAD_IDLE = 0.3
/** Busy share (smoothed) from which compression threads of their own count as what fills buffer.memory. */
const BEHIND_BUSY = 1 - AHEAD_IDLE
/** ...and the busy share the next level is predicted to stay under, from the measured cost per level. */
const MAX_PREDICTED_BUSY = 0.8
/** Consecutive keeping-up observations, and time since the last change, before going up. */
const UP_AFTER_OBSERVATIONS = 4
const UP_INTERVAL_MS = 1000
/** A level that fell behind is not tried again for this long; doubled each time it falls behind again. */
const HOLD_MS = 2000
const MAX_HOLD_MS = 60_000
/** Measured costs older than this are stale: the data may have changed, so budget mode tries the level again. */
const REMEASURE_MS = 30_000
/** Batches measured at a level before budget mode trusts its cost enough to move from it. */
const BUDGET_SAMPLES = 3
const SMOOTHING = 0.3

interface LevelCost {
  secondsPerByte: number
  samples: number
  measuredAt: number
}

/**
 * One topic's adaptive level. Pressure (buffer.memory filling because compression is busy, linger deadlines
 * missed waiting for compression) lowers the level at once, by one step per batch compressed at the new level so queued older batches do not count twice, or
 * half-way to the minimum when the buffer is nearly full. The level goes up one step at a time, only after
 * several observations in a row of idle compression (and, compressing on the event loop, a nearly empty
 * buffer), only when the next level's
 * measured cost is predicted to fit, and never back to a level that fell behind until its hold time passes
 * (doubling on every relapse): that is the hysteresis. With a CPU budget the level is also capped by the
 * highest level whose measured cost per byte fits it.
 */
export class AdaptiveLevel {
  readonly codec: CodecName
  readonly min: number
  readonly max: number
  private readonly budgetPerByte: number | null
  private readonly clock: { now(): number }
  /** The level pressure allows; the level used is this, capped by the budget's. */
  private pressureLevel: number
  private budgetLevel: number
  private aheadStreak = 0
  private lastChangeAt: number
  private idle: number | undefined
  private readonly costs = new Map<number, LevelCost>()
  private readonly heldUntil = new Map<number, { until: number; holdMs: number }>()
  private current: number

  constructor(spec: CodecSpec, options: AdaptiveLevelOptions) {
    const range = adaptiveRange(spec.codec, options.min, options.max)
    this.codec = spec.codec
    this.min = range.min
    this.max = range.max
    this.clock = options.clock
    const budget = options.cpuBudgetSecondsPerGiB
    if (budget !== undefined && !(budget > 0))
      throw new SqueezeError(
        ErrorCodes.CONFIG_INVALID,
        `squeeze.compression.cpu.budget must be above 0 CPU seconds per GiB, got ${budget}`
      )
    this.budgetPerByte = budget === undefined ? null : budget / 2 ** 30
    const start = clamp(LEVEL_RANGES[spec.codec]?.default ?? range.min, range.min, range.max)
    // With a budget, pressure only ever lowers the level from the top; the budget decides where it sits.
    this.pressureLevel = this.budgetPerByte === null ? start : range.max
    this.budgetLevel = this.budgetPerByte === null ? range.max : start
    this.current = Math.min(this.pressureLevel, this.budgetLevel)
    this.lastChangeAt = this.clock.now()
  }

  get level(): number {
    return this.current
  }

  /** The spec to seal the next batch with: a plain, standard codec and level. */
  get spec(): CodecSpec {
    return { codec: this.codec, level: this.current }
  }

  /** Measured CPU seconds per GiB at each level seen so far (for reports). */
  costsPerGiB(): ReadonlyMap<number, number> {
    return new Map([...this.costs].map(([level, cost]) => [level, cost.secondsPerByte * 2 ** 30]))
  }

  /** Takes one observation (one sealed batch); returns the change it caused, if any. */
  observe(signals: LevelSignals): LevelDecision | null {
    const now = this.clock.now()
    if (signals.sealed !== undefined) this.measure(signals.sealed.level, signals.sealed.compressSecondsPerByte, now)
    if (signals.idleFraction !== undefined)
      this.idle =
        this.idle === undefined ? signals.idleFraction : this.idle + SMOOTHING * (signals.idleFraction - this.idle)
    const pressure = this.pressure(signals, now)
    const budget = this.budgetPerByte === null ? null : this.budgetStep(signals.sealed?.level, now)
    const next = Math.min(this.pressureLevel, this.budgetLevel)
    if (next === this.current) return null
    const decision: LevelDecision = {
      from: this.current,
      to: next,
      direction: next > this.current ? 'up' : 'down',
      reason: pressure ?? budget ?? 'budget'
    }
    this.current = next
    this.lastChangeAt = now
    return decision
  }

  private measure(level: number, secondsPerByte: number, now: number): void {
    if (!Number.isFinite(secondsPerByte) || secondsPerByte < 0) return
    const cost = this.costs.get(level)
    // Samples count since the level was last entered, so a stale figure must be re-earned.
    if (cost === undefined || now - cost.measuredAt > REMEASURE_MS)
      this.costs.set(level, { secondsPerByte, samples: 1, measuredAt: now })
    else {
      cost.secondsPerByte += SMOOTHING * (secondsPerByte - cost.secondsPerByte)
      cost.samples++
      cost.measuredAt = now
    }
  }

  /** Moves pressureLevel; returns why when it moved. */
  private pressure(signals: LevelSignals, now: number): LevelChangeReason | null {
    const fill = signals.bufferMemoryBytes > 0 ? signals.bufferedBytes / signals.bufferMemoryBytes : 0
    const idle = this.idle ?? 0
    const ownThreads = signals.ownThreads === true
    const compressionFills = !ownThreads || 1 - idle >= BEHIND_BUSY
    const behind: LevelChangeReason | null =
      fill >= BEHIND_BUFFER && compressionFills ? 'buffer' : signals.lingerMissed ? 'linger' : null
    if (behind !== null) {
      this.aheadStreak = 0
      // A batch compressed at an older, higher level says nothing about the level in use now.
      const sealedAbove = signals.sealed !== undefined && signals.sealed.level > this.current
      if (this.current <= this.min || (sealedAbove && fill < SEVERE_BUFFER)) return null
      const from = this.current
      const to = fill >= SEVERE_BUFFER ? from - Math.max(1, Math.ceil((from - this.min) / 2)) : from - 1
      this.hold(from, now)
      this.pressureLevel = Math.max(this.min, to)
      return behind
    }
    // Threads of their own measure their waits and idle time themselves; the event loop's queue says it otherwise.
    const ahead =
      idle >= AHEAD_IDLE &&
      (ownThreads || (fill <= AHEAD_BUFFER && signals.queuedBytes <= signals.bufferMemoryBytes * AHEAD_QUEUED))
    this.aheadStreak = ahead ? this.aheadStreak + 1 : 0
    if (
      !ahead ||
      this.pressureLevel >= this.max ||
      this.aheadStreak < UP_AFTER_OBSERVATIONS ||
      now - this.lastChangeAt < UP_INTERVAL_MS
    )
      return null
    const up = this.pressureLevel + 1
    if (!this.mayTry(up, now) || !this.nextLevelFits(up, now)) return null
    this.pressureLevel = up
    this.aheadStreak = 0
    return up > this.current && up <= this.budgetLevel ? 'idle' : null
  }

  private hold(level: number, now: number): void {
    const previous = this.heldUntil.get(level)
    // A relapse within the hold's own span doubles it; a level that held for long starts afresh.
    const holdMs =
      previous !== undefined && now - previous.until < previous.holdMs
        ? Math.min(MAX_HOLD_MS, previous.holdMs * 2)
        : HOLD_MS
    this.heldUntil.set(level, { until: now + holdMs, holdMs })
  }

  private mayTry(level: number, now: number): boolean {
    const held = this.heldUntil.get(level)
    return held === undefined || now >= held.until
  }

  /** Whether the compression threads are predicted to stay below MAX_PREDICTED_BUSY at `level` (unknown or stale costs: try it). */
  private nextLevelFits(level: number, now: number): boolean {
    const here = this.costs.get(this.current)
    const there = this.costs.get(level)
    if (
      here === undefined ||
      there === undefined ||
      here.secondsPerByte <= 0 ||
      this.idle === undefined ||
      now - there.measuredAt > REMEASURE_MS
    )
      return true
    return (1 - this.idle) * (there.secondsPerByte / here.secondsPerByte) <= MAX_PREDICTED_BUSY
  }

  /** Moves budgetLevel; returns 'budget' when it moved. */
  private budgetStep(sealedLevel: number | undefined, now: number): LevelChangeReason | null {
    const budget = this.budgetPerByte as number
    if (sealedLevel === undefined || sealedLevel !== this.budgetLevel) return null
    const cost = this.costs.get(sealedLevel)
    if (cost === undefined) return null
    // One batch's CPU is noisy (a switch or a cold cache mid-batch): a few batches' figure, unless far over.
    const over = cost.secondsPerByte > budget && (cost.samples >= BUDGET_SAMPLES || cost.secondsPerByte > 2 * budget)
    if (over && sealedLevel > this.min) {
      this.budgetLevel = sealedLevel - 1
      return 'budget'
    }
    if (cost.samples < BUDGET_SAMPLES || sealedLevel >= this.max || cost.secondsPerByte > budget) return null
    const above = this.costs.get(sealedLevel + 1)
    // Unmeasured, fitting, or measured so long ago that the data may have changed: try it.
    if (above !== undefined && now - above.measuredAt <= REMEASURE_MS && above.secondsPerByte > budget) return null
    this.budgetLevel = sealedLevel + 1
    return 'budget'
  }
}

/** A batch that waited this much longer than linger.ms for its compression counts as a missed deadline, not jitter. */
const LINGER_SLACK_MS = 20

/** Whether a batch that waited `waitedMs` for compression (after closing) missed its linger deadline. */
export function missedLinger(waitedMs: number, lingerMs: number): boolean {
  return waitedMs > Math.max(lingerMs, LINGER_SLACK_MS)
}

/** The adaptive range for a codec: its default range, narrowed by level.min/max and clamped to what the codec accepts. */
export function adaptiveRange(codec: CodecName, min?: number, max?: number): { min: number; max: number } {
  const defaults = ADAPTIVE_RANGES[codec]
  const accepted = LEVEL_RANGES[codec]
  if (defaults === undefined || accepted === undefined)
    throw new SqueezeError(ErrorCodes.CODEC_LEVEL, `${codec} has no levels to adapt`)
  const low = clamp(min ?? defaults.min, accepted.min, accepted.max)
  const high = clamp(max ?? defaults.max, accepted.min, accepted.max)
  if (low > high) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `squeeze.compression.level.min (${low}) is above squeeze.compression.level.max (${high}) for ${formatCodecSpec({ codec, level: null, adaptive: true })}`
    )
  }
  return { min: low, max: high }
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value))
}
