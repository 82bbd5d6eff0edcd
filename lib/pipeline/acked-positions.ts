import { ErrorCodes, errorMessage, type SqueezeError } from '../errors.js'
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
  readonly metrics: Pick<SourceMetrics, 'positionAge' | 'recordsFailed' | 'heldFiles' | 'fileResent'>
  /** The least time from the start of one save to the start of the next (default SAVE_GAP_MS). */
  readonly saveGapMs?: number
  /** Followed files: a file held by a failure that may pass later is read again in this run (see Resender). */
  readonly resend?: Resender
  /** The first wait before a held file is read again, and the most (default RESEND_BACKOFF_MS, _MAX_MS). */
  readonly resendBackoff?: { readonly firstMs: number; readonly maxMs: number }
}

/** The reader of the files, as far as sending a held file's lines again needs it: a FileSet. */
export interface Resender {
  /** Stops reading the file of `key` (positionKey): its lines wait to be read again. */
  pause(key: string): void
  /** Reads it on from where it stopped: its lines are not read again in this run after all. */
  resume(key: string): void
  /** Reads it again from `offset`; the generation its batches carry from then, or null when it is closed. */
  rewind(key: string, offset: number): number | null
}

/** The first wait before a held file is read again, doubled while its lines keep failing, up to the most. */
export const RESEND_BACKOFF_MS = 1000
export const RESEND_BACKOFF_MAX_MS = 30_000

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

/** A held file, and where sending its lines again in this run stands. */
interface Hold extends HeldFile {
  /** Whether its lines are read again in this run: every failure was one that may pass (a timeout, a retriable error). */
  resendable: boolean
  /** The generation its lines are read again in, once rewound; null while waiting to be. */
  rewound: number | null
  /** Resends so far in this episode: the next one's backoff doubles with each. */
  attempts: number
  /** The backoff passed: it is rewound once its reads before are settled. */
  due: boolean
  timer: NodeJS.Timeout | null
}

/** What became of the records of one entry. */
interface Failed {
  readonly records: number
  /** Whether every failure among them may pass on a later try. */
  readonly resendable: boolean
}

const NONE_FAILED: Failed = { records: 0, resendable: true }

/** A delivery timeout (the broker unreachable, or answering retriable errors until then) or a retriable error. */
function mayPassLater(error: SqueezeError): boolean {
  return error.code === ErrorCodes.TIMEOUT || error.retriable
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
  /** The generation of `sent`'s file its lines were read in. */
  readonly generation: number
  settled: boolean
}

/** Failed records of one topic-partition, [first, end) in its count of accepted records. */
interface FailedRange {
  readonly partition: string
  readonly first: number
  readonly end: number
  readonly resendable: boolean
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
 * file's saved position stays before the lines it was sent with. Other files' positions move on as before.
 *
 * With `resend` (followed files) and a failure that may pass later (a timeout, a retriable error), the file is
 * paused, and once its reads handed before have settled and a backoff has passed, rewound to the held position
 * and read on from there: a new generation of its lines. Acknowledgements of lines read before the rewind do not
 * move its position; the first acknowledged lines read after it do, and end the hold. Lines read again fail again
 * while the broker stays away: each try waits twice as long, up to RESEND_BACKOFF_MAX_MS.
 *
 * Otherwise (a record the broker refuses would fail on every try; or no `resend`) the hold lasts for the rest of
 * the run while later lines of the file are still sent, and the next start reads the file on from the held
 * position. Either way the lines after the failed ones are sent again: duplicates, never a loss.
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
  private readonly held = new Map<string, Hold>()
  /** Per file, the generation read in since its last rewind: entries of earlier ones are read again. */
  private readonly generations = new Map<string, number>()
  /** Per file, its entries not advanced yet. */
  private readonly inFlight = new Map<string, number>()
  /** Whether held files are still read again: not once shutdown began. */
  private resending: boolean
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
    this.resending = deps.resend !== undefined
    // Reported before the records' settlement wakes the entry they belong to: an entry is judged with them known.
    deps.producer.onDeliveryFailure((failure) => this.failed(failure))
    deps.metrics.heldFiles(0)
  }

  /**
   * `sent` follows lines whose records the producer has accepted (every record accepted since the last call), and
   * `released` are files read to their end: they are saved once each of those records is acknowledged.
   */
  handed(sent: FilePosition | null, released: readonly FilePosition[] = [], generation = 0): void {
    if (sent === null && released.length === 0) return
    const accepted = acceptedMap(this.deps.producer.acceptedCounts())
    const entry: Handed = { sent, released, accepted, generation, settled: false }
    this.waiting.push(entry)
    if (sent !== null) this.count(positionKey(sent), 1)
    const settling: Promise<void> = this.deps.producer.whenAcceptedSettled().then(() => {
      this.settling.delete(settling)
      entry.settled = true
      this.advance()
    })
    this.settling.add(settling)
  }

  /** The files whose saved positions stay before lines that failed delivery in this run. */
  heldFiles(): HeldFile[] {
    return [...this.held.values()].map(({ path, offset, records }) => ({ path, offset, records }))
  }

  /**
   * Whether the file of `key` is to stay open: lines of it wait for their records' outcome, or to be read again.
   * A file rotated away is released (closed) only once neither holds.
   */
  keeps(key: string): boolean {
    return (this.inFlight.get(key) ?? 0) > 0 || this.held.get(key)?.resendable === true
  }

  /** Shutdown, after the last positions were handed: flushes, waits for every acknowledgement, saves a last time. */
  async close(): Promise<void> {
    // Held files stay held: the summary names them, and the next start reads them on from their saved position.
    this.resending = false
    for (const hold of this.held.values()) if (hold.timer !== null) clearTimeout(hold.timer)
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
    const { firstRecordIndex: first, records } = failure
    this.failures.push({ partition, first, end: first + records, resendable: mayPassLater(failure.error) })
  }

  private count(key: string, by: number): void {
    const n = (this.inFlight.get(key) ?? 0) + by
    if (n === 0) this.inFlight.delete(key)
    else this.inFlight.set(key, n)
  }

  /** Moves the acknowledged positions on, in order, and schedules a save when one moved. */
  private advance(): void {
    let moved = false
    while (this.waiting[0]?.settled === true) {
      const entry = this.waiting.shift() as Handed
      const failed = this.failures.length === 0 ? NONE_FAILED : this.failedIn(entry.accepted)
      this.advancedTo = entry.accepted
      // Only the sent lines have records in the entry: released files' lines were sent with entries before.
      if (entry.sent !== null) moved = this.settle(entry.sent, entry.generation, failed) || moved
      for (const p of entry.released) moved = this.note(p) || moved
    }
    for (const key of this.held.keys()) this.resendIfDue(key)
    if (!moved) return
    this.version++
    if (!this.closing) this.schedule()
  }

  /** Records that failed among those accepted from advancedTo up to `accepted`; drops the failures before it. */
  private failedIn(accepted: ReadonlyMap<string, number>): Failed {
    let records = 0
    let resendable = true
    for (const f of this.failures) {
      const from = Math.max(f.first, this.advancedTo.get(f.partition) ?? 0)
      const failed = Math.max(0, Math.min(f.end, accepted.get(f.partition) ?? 0) - from)
      records += failed
      if (failed > 0) resendable &&= f.resendable
    }
    this.failures = this.failures.filter((f) => f.end > (accepted.get(f.partition) ?? 0))
    return { records, resendable }
  }

  /** The outcome of the lines up to `sent`, read in `generation`: a position to save, a hold, or neither. */
  private settle(sent: FilePosition, generation: number, failed: Failed): boolean {
    const key = positionKey(sent)
    this.count(key, -1)
    if (generation < (this.generations.get(key) ?? 0)) {
      // Read before the file was rewound: these lines are read and sent again, whatever became of them.
      this.deps.metrics.recordsFailed(failed.records)
      return false
    }
    if (failed.records > 0) return this.hold(sent, failed)
    const hold = this.held.get(key)
    if (hold === undefined) return this.note(sent)
    // Lines after the failed ones, read before the rewind or after a refusal: the position stays before them.
    if (hold.rewound === null || !hold.resendable) return false
    // The first lines read again are acknowledged: the file's position moves on from here.
    this.held.delete(key)
    this.deps.metrics.heldFiles(this.held.size)
    this.deps.log.info(
      { file: sent.path, from: hold.offset, offset: sent.offset, records: hold.records, resends: hold.attempts },
      'lines that failed delivery were sent again and acknowledged; the read position moves on'
    )
    this.acked.set(key, sent)
    return true
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
  private hold(sent: FilePosition, { records, resendable }: Failed): boolean {
    this.deps.metrics.recordsFailed(records)
    const key = positionKey(sent)
    const known = this.held.get(key)
    if (known !== undefined) {
      known.records += records
      if (!resendable) this.giveUp(key, known)
      // The lines read again failed too: another try, after a longer backoff. Logged once per hold.
      else if (known.resendable && known.rewound !== null) this.scheduleResend(key, known)
      return false
    }
    const saved = this.acked.get(key)
    const offset = saved?.offset ?? 0
    const hold: Hold = {
      path: sent.path,
      offset,
      records,
      resendable,
      rewound: null,
      attempts: 0,
      due: false,
      timer: null
    }
    this.held.set(key, hold)
    this.deps.metrics.heldFiles(this.held.size)
    const again = this.resending && resendable ? 'read and sent again in this run' : 'sent again on the next start'
    this.deps.log.error(
      { file: sent.path, offset, records },
      `delivery failed: the file's read position stays before these lines; they are ${again}`
    )
    if (this.resending && resendable) this.scheduleResend(key, hold)
    if (saved !== undefined) return false
    const { path, dev, ino, fingerprint, fingerprintBytes } = sent
    this.acked.set(key, { path, dev, ino, fingerprint, fingerprintBytes, offset: 0 })
    return true
  }

  /** Pauses the held file and rewinds it after a backoff, doubled with each try, once its reads before settled. */
  private scheduleResend(key: string, hold: Hold): void {
    hold.rewound = null
    hold.due = false
    if (!this.resending) return
    this.deps.resend?.pause(key)
    const { firstMs, maxMs } = this.deps.resendBackoff ?? { firstMs: RESEND_BACKOFF_MS, maxMs: RESEND_BACKOFF_MAX_MS }
    const delay = Math.min(firstMs * 2 ** hold.attempts, maxMs)
    hold.attempts++
    hold.timer = setTimeout(() => {
      hold.timer = null
      hold.due = true
      this.resendIfDue(key)
    }, delay)
    // A backoff does not keep the process up: shutdown goes through close().
    hold.timer.unref()
  }

  /** Rewinds a held file whose backoff passed and whose reads before have all settled. */
  private resendIfDue(key: string): void {
    const hold = this.held.get(key)
    if (hold === undefined || !hold.due || !this.resending || (this.inFlight.get(key) ?? 0) > 0) return
    hold.due = false
    const generation = this.deps.resend?.rewind(key, hold.offset) ?? null
    if (generation === null) {
      this.deps.log.warn({ file: hold.path }, 'the held file is closed; its lines are sent again on the next start')
      this.giveUp(key, hold)
      return
    }
    hold.rewound = generation
    this.generations.set(key, generation)
    this.deps.metrics.fileResent()
  }

  /** The hold lasts for the rest of the run: the next start reads the file on from its saved position. */
  private giveUp(key: string, hold: Hold): void {
    // Its later lines are read and sent on meanwhile, as without resend.
    if (hold.rewound === null) this.deps.resend?.resume(key)
    hold.resendable = false
    hold.due = false
    if (hold.timer !== null) clearTimeout(hold.timer)
    hold.timer = null
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
