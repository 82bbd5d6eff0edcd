import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { DeliveryFailure, Producer } from '../producer/producer.js'
import { toDeadLetter, type PoisonRecord } from '../protocol/dead-letter.js'
import type { ReaderHandlers } from './partition-reader.js'

/**
 * What a dead-letter copy that cannot be written does: 'stop' ends the consumer before any offset past the record
 * is committed (Kafka Connect's errors.tolerance=none); 'skip' counts it and reading goes on.
 */
export type DeadLetterFailurePolicy = 'stop' | 'skip'

export const DEAD_LETTER_FAILURE_POLICIES = ['stop', 'skip'] as const

/** How many failed copies are logged one by one under 'skip'; the rest are counted. */
const LOGGED_FAILURES = 20

export interface DeadLetterDeps {
  readonly producer: Pick<Producer, 'send' | 'flushAccepted' | 'onDeliveryFailure'>
  readonly log: Logger
  /** Called once, with the one-line error, when a copy fails under 'stop': the caller aborts its reading. */
  readonly onStop: (error: SqueezeError) => void
  /** Counts copies given up under 'skip'. */
  readonly skipped?: (records: number) => void
}

/**
 * Sends poison records to a dead-letter topic and keeps the promise the group's commits rely on: settle()
 * resolves only once every copy handed over so far is acknowledged (or, under 'skip', counted as failed).
 * The copies wait in the producer's batches, under its buffer.memory; a copy not yet taken in (the producer
 * waits for memory) holds the reader at the end of its round (betweenRounds), so nothing grows without bound.
 */
export class DeadLetters {
  /** Copies handed to the producer and not yet taken into a batch. */
  private readonly entering = new Set<Promise<void>>()
  private failure: SqueezeError | undefined
  private failedRecords = 0

  constructor(
    private readonly topic: string,
    private readonly policy: DeadLetterFailurePolicy,
    private readonly deps: DeadLetterDeps
  ) {
    deps.producer.onDeliveryFailure((failure) => {
      if (failure.topic === this.topic) this.failed(failure.records, failure.error, sourceOf(failure))
    })
  }

  /** Copies given up under 'skip'. */
  get skipped(): number {
    return this.policy === 'skip' ? this.failedRecords : 0
  }

  /** Hands a poison record over; its outcome is awaited by settle(), never left as an unhandled rejection. */
  add(poison: PoisonRecord): void {
    if (this.failure !== undefined) return
    const entering: Promise<void> = this.deps.producer
      .send({ topic: this.topic, ...toDeadLetter(poison) })
      .catch((err: unknown) => this.failed(1, err, `${poison.topic}-${poison.partition}@${poison.record.offset}`))
      .finally(() => this.entering.delete(entering))
    this.entering.add(entering)
  }

  /** Holds the reader until every copy is inside the producer's buffer.memory. */
  async betweenRounds(): Promise<void> {
    while (this.entering.size > 0) await Promise.all(this.entering)
  }

  /**
   * Resolves once every copy handed over so far is acknowledged or counted as failed; under 'stop' a failure
   * throws, now and on every later call, so no commit after it goes through.
   */
  async settle(): Promise<void> {
    this.throwIfStopped()
    await this.betweenRounds()
    await this.deps.producer.flushAccepted()
    this.throwIfStopped()
  }

  /** The reader's handlers, with the reader held at the end of each round until the copies are taken in. */
  wrap(handlers: ReaderHandlers): ReaderHandlers {
    return {
      onBatch: (event) => handlers.onBatch(event),
      onCorruptBatch: (event) => handlers.onCorruptBatch(event),
      ...(handlers.onStoredBatch === undefined ? {} : { onStoredBatch: handlers.onStoredBatch.bind(handlers) }),
      ...(handlers.onAbortedBatch === undefined ? {} : { onAbortedBatch: handlers.onAbortedBatch.bind(handlers) }),
      betweenRounds: async () => {
        await handlers.betweenRounds?.()
        await this.betweenRounds()
      }
    }
  }

  private throwIfStopped(): void {
    if (this.failure !== undefined && this.policy === 'stop') throw this.failure
  }

  private failed(records: number, err: unknown, source: string | undefined): void {
    this.failedRecords += records
    const where = source === undefined ? '' : ` (from ${source})`
    if (this.policy === 'skip') {
      this.deps.skipped?.(records)
      if (this.failedRecords <= LOGGED_FAILURES) {
        const message = `dead-letter copy${where} not written; counted and skipped`
        this.deps.log.warn({ topic: this.topic, records, err: errorMessage(err) }, message)
      }
      return
    }
    if (this.failure !== undefined) return
    this.failure = new SqueezeError(
      ErrorCodes.DEAD_LETTER_FAILED,
      `cannot write a poison record${where} to dead-letter topic ${this.topic}: ${errorMessage(err)}; stopped before ` +
        'committing past it (--on-dead-letter-failure skip counts such records and goes on)',
      { cause: err }
    )
    this.deps.onStop(this.failure)
  }
}

/** The source coordinates a failed copy carries in its headers, as toDeadLetter wrote them. */
function sourceOf(failure: DeliveryFailure): string | undefined {
  const headers = failure.sent[0]?.headers
  if (headers === undefined) return undefined
  const value = (key: string): string | undefined => headers.find((h) => h.key === key)?.value?.toString()
  const topic = value('squeeze.source.topic')
  if (topic === undefined) return undefined
  return `${topic}-${value('squeeze.source.partition') ?? '?'}@${value('squeeze.source.offset') ?? '?'}`
}
