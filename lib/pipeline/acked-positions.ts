import { errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { SourceMetrics } from '../metrics/source-metrics.js'
import type { Producer } from '../producer/producer.js'
import type { FilePosition } from '../sources/file-set.js'

/** Where positions go once the records of the lines before them are acknowledged: a state file, or none. */
export interface PositionSink {
  save(positions: readonly FilePosition[]): Promise<void>
  ageSeconds(): number | null
}

export interface AckedPositionsDeps {
  readonly sink: PositionSink
  readonly producer: Pick<Producer, 'whenAcceptedSettled' | 'flushAccepted' | 'snapshot'>
  readonly log: Logger
  readonly metrics: Pick<SourceMetrics, 'positionAge'>
  /** The least time from the start of one save to the start of the next (default SAVE_GAP_MS). */
  readonly saveGapMs?: number
}

/**
 * Saves start back to back by default, so a SIGKILL resends only lines whose records were not acknowledged yet, or
 * were acknowledged while the last save was being written: the at-least-once promise the shipper makes. A gap would
 * coalesce more acknowledgements per save (fewer fsyncs) but resend up to that long's acknowledged lines.
 */
export const SAVE_GAP_MS = 0

/** Positions handed on after records the producer accepted, waiting for those records' acknowledgements. */
interface Handed {
  readonly positions: readonly FilePosition[]
  settled: boolean
}

export function positionKey(p: Pick<FilePosition, 'dev' | 'ino'>): string {
  return `${p.dev}:${p.ino}`
}

/**
 * At least once: read positions saved as the producer acknowledges the records of the lines before them, so a
 * crash resends only lines whose records were not acknowledged yet, or acknowledged since the last save began (and,
 * with a gap, up to saveGapMs before the next one). Saves are coalesced and never hold up sending: at most one runs, and at most
 * one waits, for the gap since the last one began to pass, then writes the newest positions. Shutdown writes the
 * final positions once, unless the last save already covered them.
 */
export class AckedPositions {
  /** Per file, the position after the last line whose records are all acknowledged: what a save writes. */
  private readonly acked: Map<string, FilePosition>
  /** In the order handed on: a position advances only once those before it did. */
  private readonly waiting: Handed[] = []
  private readonly settling = new Set<Promise<void>>()
  private saving: Promise<void> | null = null
  private again = false
  private failedSeen: number
  /** Bumped when acknowledged positions move: a save that wrote the current version leaves nothing to write. */
  private version = 0
  private savedVersion = -1
  private lastSaveStartMs = -Infinity
  /** Ends the wait for the gap between saves early: set while a save waits. */
  private wake: (() => void) | null = null
  private closing = false
  private readonly gapMs: number

  constructor(
    private readonly deps: AckedPositionsDeps,
    saved: readonly FilePosition[]
  ) {
    this.acked = new Map(saved.filter((p) => p.done !== true).map((p) => [positionKey(p), p]))
    this.failedSeen = deps.producer.snapshot().recordsFailed
    this.gapMs = deps.saveGapMs ?? SAVE_GAP_MS
  }

  /**
   * `positions` follow lines whose records the producer has accepted (every record accepted so far): they are
   * saved once each of those records is acknowledged.
   */
  handed(positions: readonly FilePosition[]): void {
    if (positions.length === 0) return
    const entry: Handed = { positions, settled: false }
    this.waiting.push(entry)
    const settling: Promise<void> = this.deps.producer.whenAcceptedSettled().then(() => {
      this.settling.delete(settling)
      entry.settled = true
      this.advance()
    })
    this.settling.add(settling)
  }

  /** Shutdown, after the last positions were handed: flushes, waits for every acknowledgement, saves a last time. */
  async close(): Promise<void> {
    await this.deps.producer.flushAccepted()
    await Promise.all(this.settling)
    // A save waiting for its gap is called off: the final save below writes what it would have.
    this.closing = true
    this.wake?.()
    await this.saving
    if (this.savedVersion !== this.version) await this.save()
  }

  /** Moves the acknowledged positions on, in order, and schedules a save when one moved. */
  private advance(): void {
    let moved = false
    while (this.waiting[0]?.settled === true) {
      const entry = this.waiting.shift() as Handed
      const failed = this.deps.producer.snapshot().recordsFailed
      if (failed > this.failedSeen) {
        // Some of these lines' records (or of lines before them) failed: this position is not saved; the next is.
        this.deps.log.warn({ failed: failed - this.failedSeen }, 'records failed: read positions not advanced')
        this.failedSeen = failed
        continue
      }
      for (const p of entry.positions) this.acked.set(positionKey(p), p)
      moved = true
    }
    if (!moved) return
    this.version++
    if (!this.closing) this.schedule()
  }

  private schedule(): void {
    if (this.saving !== null) {
      this.again = true
      return
    }
    this.saving = this.saveUntilCurrent().finally(() => {
      this.saving = null
    })
  }

  /** Saves once the gap since the last save began has passed, and again while positions moved on meanwhile. */
  private async saveUntilCurrent(): Promise<void> {
    do {
      const wait = this.lastSaveStartMs + this.gapMs - performance.now()
      if (wait > 0) await this.pause(wait)
      if (this.closing) return
      this.again = false
      this.lastSaveStartMs = performance.now()
      await this.save()
    } while (this.again)
  }

  /** Waits `ms`, or less if close() wakes it. */
  private pause(ms: number): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(() => this.wake?.(), ms)
      // A save waiting does not keep the process up: shutdown goes through close(), which wakes it.
      timer.unref()
      this.wake = () => {
        clearTimeout(timer)
        this.wake = null
        done()
      }
    })
  }

  private async save(): Promise<void> {
    const noted = [...this.acked.values()]
    const version = this.version
    try {
      await this.deps.sink.save(noted)
    } catch (err) {
      this.deps.log.error({ err: errorMessage(err) }, 'saving read positions failed')
      return
    }
    this.savedVersion = version
    // A file done with is saved once as done; then its entry goes, unless it was read again meanwhile.
    for (const p of noted)
      if (p.done === true && this.acked.get(positionKey(p)) === p) this.acked.delete(positionKey(p))
    this.deps.metrics.positionAge(0)
  }
}
