import { errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { SourceMetrics } from '../metrics/source-metrics.js'
import type { AcceptedCount, DeliveryFailure, Producer } from '../producer/producer.js'
import type { FilePosition } from '../sources/file-set.js'

/** Where positions go once the records of the lines before them are acknowledged: a state file, or none. */
export interface PositionSink {
  save(positions: readonly FilePosition[]): Promise<void>
  ageSeconds(): number | null
}

export interface AckedPositionsDeps {
  readonly sink: PositionSink
  readonly producer: Pick<Producer, 'whenAcceptedSettled' | 'flushAccepted' | 'acceptedCounts' | 'onDeliveryFailure'>
  readonly log: Logger
  readonly metrics: Pick<SourceMetrics, 'positionAge' | 'recordsFailed' | 'heldFiles'>
  /** The least time from the start of one save to the start of the next (default SAVE_GAP_MS). */
  readonly saveGapMs?: number
}

/**
 * A file whose saved position stays where it was before lines whose records failed delivery: the next start reads
 * it on from `offset`, so those lines, and the ones after them, are sent again.
 */
export interface HeldFile {
  readonly path: string
  readonly offset: number
  /** Records of its lines that failed in this run. */
  records: number
}

/**
 * Saves start back to back by default, so a SIGKILL resends only lines whose records were not acknowledged yet, or
 * were acknowledged while the last save was being written: the at-least-once promise the shipper makes. A gap would
 * coalesce more acknowledgements per save (fewer fsyncs) but resend up to that long's acknowledged lines.
 */
export const SAVE_GAP_MS = 0

/** Positions handed on after records the producer accepted, waiting for those records' outcomes. */
interface Handed {
  /** The position after the lines whose records were accepted since the entry before; null for none. */
  readonly sent: FilePosition | null
  /** Files read to their end meanwhile, whose lines were sent before. */
  readonly released: readonly FilePosition[]
  /** Records accepted per topic-partition once this entry's were: its records are those since the entry before. */
  readonly accepted: ReadonlyMap<string, number>
  settled: boolean
}

/** Failed records of one topic-partition, [first, end) in its count of accepted records. */
interface FailedRange {
  readonly partition: string
  readonly first: number
  readonly end: number
}

function partitionOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}

function acceptedMap(counts: readonly AcceptedCount[]): Map<string, number> {
  return new Map(counts.map((c) => [partitionOf(c.topic, c.partition), c.accepted]))
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
 *
 * A record that fails delivery (delivery.timeout.ms, a produce error that is not retried) holds its file: the
 * file's saved position stays before the lines it was sent with for the rest of the run, while later lines of the
 * file are still sent. The next start reads the file on from there: those lines, and the acknowledged ones after
 * them, are sent again (duplicates, never a loss). Other files' positions move on as before.
 */
export class AckedPositions {
  /** Per file, the position after the last line whose records are all acknowledged: what a save writes. */
  private readonly acked: Map<string, FilePosition>
  /** In the order handed on: a position advances only once those before it did. */
  private readonly waiting: Handed[] = []
  private readonly settling = new Set<Promise<void>>()
  /** Failed records not yet matched to the entries they were accepted in. */
  private failures: FailedRange[] = []
  /** The accepted counts of the last entry advanced: where the next entry's records begin. */
  private advancedTo: ReadonlyMap<string, number>
  /** Files held by a failed record, by positionKey. */
  private readonly held = new Map<string, HeldFile>()
  private saving: Promise<void> | null = null
  private again = false
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
    this.advancedTo = acceptedMap(deps.producer.acceptedCounts())
    this.gapMs = deps.saveGapMs ?? SAVE_GAP_MS
    // Reported before the records' settlement wakes the entry they belong to: an entry is judged with them known.
    deps.producer.onDeliveryFailure((failure) => this.failed(failure))
    deps.metrics.heldFiles(0)
  }

  /**
   * `sent` follows lines whose records the producer has accepted (every record accepted since the last call), and
   * `released` are files read to their end: they are saved once each of those records is acknowledged.
   */
  handed(sent: FilePosition | null, released: readonly FilePosition[] = []): void {
    if (sent === null && released.length === 0) return
    const accepted = acceptedMap(this.deps.producer.acceptedCounts())
    const entry: Handed = { sent, released, accepted, settled: false }
    this.waiting.push(entry)
    const settling: Promise<void> = this.deps.producer.whenAcceptedSettled().then(() => {
      this.settling.delete(settling)
      entry.settled = true
      this.advance()
    })
    this.settling.add(settling)
  }

  /** The files whose saved positions stay before lines that failed delivery in this run. */
  heldFiles(): HeldFile[] {
    return [...this.held.values()]
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

  private failed(failure: DeliveryFailure): void {
    const partition = partitionOf(failure.topic, failure.partition)
    this.failures.push({ partition, first: failure.firstRecordIndex, end: failure.firstRecordIndex + failure.records })
  }

  /** Moves the acknowledged positions on, in order, and schedules a save when one moved. */
  private advance(): void {
    let moved = false
    while (this.waiting[0]?.settled === true) {
      const entry = this.waiting.shift() as Handed
      const failed = this.failures.length === 0 ? 0 : this.failedIn(entry.accepted)
      this.advancedTo = entry.accepted
      // Only the sent lines have records in the entry: released files' lines were sent with entries before.
      if (entry.sent !== null) moved = (failed > 0 ? this.hold(entry.sent, failed) : this.note(entry.sent)) || moved
      for (const p of entry.released) moved = this.note(p) || moved
    }
    if (!moved) return
    this.version++
    if (!this.closing) this.schedule()
  }

  /** Records that failed among those accepted from advancedTo up to `accepted`; drops the failures before it. */
  private failedIn(accepted: ReadonlyMap<string, number>): number {
    let records = 0
    for (const f of this.failures) {
      const from = Math.max(f.first, this.advancedTo.get(f.partition) ?? 0)
      records += Math.max(0, Math.min(f.end, accepted.get(f.partition) ?? 0) - from)
    }
    this.failures = this.failures.filter((f) => f.end > (accepted.get(f.partition) ?? 0))
    return records
  }

  /** A position to save, unless its file is held. */
  private note(p: FilePosition): boolean {
    const key = positionKey(p)
    if (this.held.has(key)) return false
    this.acked.set(key, p)
    return true
  }

  /**
   * Holds `sent`'s file where its saved position is: logged once per file with the offset the next start reads on
   * from. A file with no position yet is saved at its start, so the next start finds it even if it was renamed.
   */
  private hold(sent: FilePosition, records: number): boolean {
    this.deps.metrics.recordsFailed(records)
    const key = positionKey(sent)
    const known = this.held.get(key)
    if (known !== undefined) {
      known.records += records
      return false
    }
    const saved = this.acked.get(key)
    const offset = saved?.offset ?? 0
    this.held.set(key, { path: sent.path, offset, records })
    this.deps.metrics.heldFiles(this.held.size)
    this.deps.log.error(
      { file: sent.path, offset, records },
      "delivery failed: the file's read position stays before these lines; they are sent again on the next start"
    )
    if (saved !== undefined) return false
    const { path, dev, ino, fingerprint, fingerprintBytes } = sent
    this.acked.set(key, { path, dev, ino, fingerprint, fingerprintBytes, offset: 0 })
    return true
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
