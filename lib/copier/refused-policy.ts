import type { CorruptBatchEvent } from '../consumer/partition-reader.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { CopierMetrics } from '../metrics/copier-metrics.js'
import { toDeadLetter, type PoisonRecord } from '../protocol/dead-letter.js'
import { isRecordRefusal, type DeliveryFailure, type Producer } from '../producer/producer.js'
import type { CopierConfig, CopierStats, RefusedPolicy } from './copier-config.js'
import type { FanOut } from './fan-out.js'
import type { SentOffsets } from './sent-offsets.js'

/** The largest stored batch a dead letter carries: below the producer's default max.request.size. */
const DEAD_LETTER_BATCH_BYTES = 512 * 1024

export type RefusalConfig = Pick<
  CopierConfig,
  'sourceTopic' | 'groupId' | 'exactlyOnce' | 'onRefused' | 'deadLetterTopic' | 'onUnreadable'
>

export interface RefusalDeps {
  readonly producer: Producer
  readonly fanOut: FanOut
  readonly log: Logger
  readonly metrics?: CopierMetrics
  /** The copier's counters: `refused` counts each copy set aside. */
  readonly stats: CopierStats
}

/** Start-up check: a refusal in a transaction aborts it whole, and a dead letter needs somewhere to go. */
export function validateRefusedPolicy(config: RefusalConfig): void {
  if (config.exactlyOnce && (config.onRefused ?? 'fail') !== 'fail') {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      'refused records can be skipped or dead-lettered in at-least-once mode only (a refusal aborts the whole ' +
        `transaction); drop --exactly-once or --on-refused ${config.onRefused}`
    )
  }
  if (config.onRefused === 'dead-letter' && config.deadLetterTopic === undefined) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--on-refused dead-letter needs --dead-letter-topic')
  }
}

/**
 * The refused-record policy: copies a destination refused, source batches that cannot be read, and delivery
 * failures are gathered between commits and sorted out at each commit as --on-refused says, so a commit either
 * goes past them (skipped or dead-lettered) or fails with one line that says how to go past them.
 */
export class Refusals {
  /** Delivery failures since the last commit, sorted out there. */
  private readonly failures: DeliveryFailure[] = []
  /** Copies refused since the last commit: by send() at once, or by a destination (found at commit). */
  private readonly refused: PoisonRecord[] = []
  /** The failure the copy stopped at, at-least-once: every later commit fails with it. */
  private unsettled: unknown = null

  constructor(
    private readonly config: RefusalConfig,
    private readonly deps: RefusalDeps
  ) {}

  deliveryFailed(failure: DeliveryFailure): void {
    this.failures.push(failure)
  }

  /** Copies the producer refused before any destination saw them (over max.request.size). */
  add(refused: readonly PoisonRecord[]): void {
    this.refused.push(...refused)
  }

  /**
   * A source batch that cannot be read follows --on-refused: 'fail' stops the copy with one line that says how to
   * go past it (this throws); 'skip' and 'dead-letter' let the caller count it and move on.
   */
  checkUnreadable({ partition, lastOffset, error }: CorruptBatchEvent): void {
    if (this.unreadablePolicy() !== 'fail') return
    // BATCH_CORRUPT whatever the cause: a runtime stop (exit 1), not a codec setting to correct (exit 2).
    const reset =
      `kafka-consumer-groups --reset-offsets --to-offset ${lastOffset + 1} --group ${this.config.groupId} ` +
      `--topic ${this.config.sourceTopic}:${partition} --execute`
    const message =
      `source batch cannot be copied: ${error.message}. To go past it, run with --on-refused skip ` +
      `(or dead-letter), or move the group past it: ${reset}`
    throw new SqueezeError(ErrorCodes.BATCH_CORRUPT, message, { cause: error })
  }

  /** Skips a source batch that cannot be read; 'dead-letter' also sends the stored batch there before the commit. */
  skipUnreadable({ partition, baseOffset, lastOffset, error, bytes }: CorruptBatchEvent): void {
    const fields = { partition, baseOffset, lastOffset, code: error.code }
    this.deps.log.warn(fields, `skipping a source batch that cannot be read: ${error.message}`)
    if (this.unreadablePolicy() !== 'dead-letter') return
    // Its records cannot be read: the dead letter holds the stored batch, as the consumer's does.
    const value = bytes === undefined || bytes.length > DEAD_LETTER_BATCH_BYTES ? null : Buffer.from(bytes)
    const record = { offset: baseOffset, timestamp: Date.now(), key: null, value, headers: [] }
    this.refused.push({ topic: this.config.sourceTopic, partition, record, code: error.code, reason: error.message })
  }

  /**
   * After a flush, every copy sent is acknowledged or failed. A failure to deliver stops the copy before its
   * offsets are committed (the producer retried what can be retried); a refused record is handled as
   * `onRefused` says, so the commit can go past it.
   */
  async settle(marks: ReadonlyMap<SentOffsets, number>): Promise<void> {
    // Once the copy cannot go past a failure, no later commit may go past it either (kafkajs can run the batch
    // loop again after the error).
    if (this.unsettled !== null) throw this.unsettled
    try {
      this.collectFailures()
      this.deps.fanOut.forget(marks)
      await this.applyPolicy(this.refused.splice(0))
    } catch (err) {
      this.unsettled = err
      throw err
    }
  }

  private unreadablePolicy(): RefusedPolicy {
    return this.config.onUnreadable ?? this.config.onRefused ?? 'fail'
  }

  /** Turns each delivery failure into refused copies with their source offsets, or throws on one not a refusal. */
  private collectFailures(): void {
    const failures = this.failures.splice(0)
    const fatal = failures.find((f) => !isRecordRefusal(f.error))
    if (fatal !== undefined) {
      throw new SqueezeError(
        ErrorCodes.PRODUCE_FAILED,
        `destination ${fatal.topic} failed to take ${fatal.records} records (${fatal.error.message}); ` +
          'source offsets are not committed past them',
        { cause: fatal.error }
      )
    }
    for (const failure of failures) {
      failure.sent.forEach((record, i) => {
        const offset = this.deps.fanOut.sourceOffset(failure.topic, failure.partition, failure.firstRecordIndex + i)
        if (offset === undefined) {
          throw new SqueezeError(
            ErrorCodes.PRODUCE_FAILED,
            `destination ${failure.topic} refused a record the copier has no source offset for ` +
              `(${failure.error.message})`,
            { cause: failure.error }
          )
        }
        this.refused.push({
          topic: this.config.sourceTopic,
          partition: failure.partition,
          record: { ...record, offset },
          code: failure.error.code,
          reason: failure.error.message,
          destination: failure.topic
        })
      })
    }
  }

  private async applyPolicy(refused: readonly PoisonRecord[]): Promise<void> {
    if (refused.length === 0) return
    const policy = this.config.onRefused ?? 'fail'
    if (policy === 'fail') {
      const [first] = refused as [PoisonRecord]
      throw new SqueezeError(
        first.code,
        `${first.destination} refused the record at ${first.topic}-${first.partition} offset ` +
          `${first.record.offset}: ${first.reason}; ` +
          'copy it elsewhere with --dead-letter-topic, or --on-refused skip, to go past it'
      )
    }
    for (const poison of refused) {
      this.deps.stats.refused++
      this.deps.metrics?.recordsRefused(poison.destination ?? '', poison.code, 1)
      const fields = {
        destination: poison.destination,
        partition: poison.partition,
        offset: poison.record.offset,
        code: poison.code
      }
      const message =
        policy === 'skip'
          ? 'destination refused a record; skipped'
          : 'destination refused a record; sent to the dead-letter topic'
      this.deps.log.warn(fields, message)
    }
    const deadLetterTopic = this.config.deadLetterTopic
    if (policy !== 'dead-letter' || deadLetterTopic === undefined) return
    await this.sendDeadLetters(refused, deadLetterTopic)
  }

  private async sendDeadLetters(refused: readonly PoisonRecord[], deadLetterTopic: string): Promise<void> {
    for (const poison of refused) await this.deps.producer.send({ topic: deadLetterTopic, ...toDeadLetter(poison) })
    await this.deps.producer.flush()
    // Copies sent meanwhile may have failed too: those are the next commit's to sort out.
    const lost = this.failures.find((f) => f.topic === deadLetterTopic)
    this.failures.splice(0, this.failures.length, ...this.failures.filter((f) => f.topic !== deadLetterTopic))
    if (lost !== undefined) {
      throw new SqueezeError(
        ErrorCodes.PRODUCE_FAILED,
        `cannot write refused records to the dead-letter topic ${deadLetterTopic}: ${lost.error.message}`,
        { cause: lost.error }
      )
    }
  }
}
