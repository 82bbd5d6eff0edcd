import { PartitionTable } from '../kafka/group-by-topic.js'
import type { PoisonRecord } from '../protocol/dead-letter.js'
import type { OpenBatch } from '../protocol/record-batch-builder.js'
import { rawRecordAt } from '../protocol/record-batch-reader.js'
import type { RawRecords } from '../protocol/record.js'
import { isRecordRefusal, type Producer } from '../producer/producer.js'
import { SentOffsets } from './sent-offsets.js'

/**
 * What the fan-out needs of the producer: sendRawTo and sendBatchTo, and its count of accepted records to tell
 * where sendRawTo stopped.
 */
export type FanOutProducer = Pick<Producer, 'sendRawTo' | 'sendBatchTo'> & {
  snapshot(): { readonly recordsAccepted: number }
}

export interface FanOutConfig {
  readonly sourceTopic: string
  /** One destination topic per target, each with the source's partitions. */
  readonly destinations: readonly string[]
  /** In a transaction nothing may be left out (a refusal rejects), and a failure aborts it whole (no offsets kept). */
  readonly exactlyOnce: boolean
}

/**
 * Copies the records of one source partition to the same partition of every destination, with one sendRawTo per
 * destination: records that fit an open batch are taken without a promise per record and destination, which
 * `await send()` for each cost, and their bytes as read, without a record object. At-least-once, it keeps the
 * source offset of every copy the producer accepted, by its place among the copies of that destination partition,
 * as delivery failures name them.
 */
export class FanOut {
  private readonly sent = new PartitionTable(() => new SentOffsets())

  constructor(
    private readonly producer: FanOutProducer,
    private readonly config: FanOutConfig
  ) {}

  /**
   * Resolves once every destination accepted records `from` up to `to`, or refused one as it is (over max.request.size):
   * those copies come back in source order, one record's after the other's. Any other failure rejects (the
   * copies accepted before it stay accounted for), as does a refusal exactly-once.
   */
  async send(partition: number, records: RawRecords, from: number, to: number): Promise<PoisonRecord[]> {
    const refused: PoisonRecord[] = []
    for (const topic of this.config.destinations) await this.sendTo(topic, partition, records, from, to, refused)
    return refused.length > 1 ? refused.sort((a, b) => a.record.offset - b.record.offset) : refused
  }

  /**
   * send() for a whole source batch that keeps its boundaries: `whole` (its records section, ReadBatch.whole) goes
   * to every destination as one batch, compressed there with the destination's codec, instead of record by record.
   * A destination whose batch.size it exceeds takes the records one by one, as send() does.
   */
  async sendBatch(partition: number, records: RawRecords, whole: OpenBatch): Promise<PoisonRecord[]> {
    const refused: PoisonRecord[] = []
    for (const topic of this.config.destinations) {
      const taken = await this.producer.sendBatchTo(topic, partition, whole)
      if (taken) this.accepted(topic, partition, records, 0, records.count)
      else await this.sendTo(topic, partition, records, 0, records.count, refused)
    }
    return refused.length > 1 ? refused.sort((a, b) => a.record.offset - b.record.offset) : refused
  }

  /** The source offset of the `index`-th copy accepted for that destination partition since the last forget(). */
  sourceOffset(topic: string, partition: number, index: number): number | undefined {
    return this.sent.get(topic, partition).offsetOf(index)
  }

  /** Where each destination partition's copies stand now: forget(marks) later drops the offsets of those before. */
  marks(): Map<SentOffsets, number> {
    return new Map([...this.sent.values()].map((offsets) => [offsets, offsets.count]))
  }

  /** Every copy before `marks` was acknowledged or reported: drops their offsets (the places keep counting). */
  forget(marks: ReadonlyMap<SentOffsets, number>): void {
    for (const [offsets, mark] of marks) offsets.forget(mark)
  }

  private async sendTo(
    topic: string,
    partition: number,
    records: RawRecords,
    from: number,
    to: number,
    refused: PoisonRecord[]
  ): Promise<void> {
    while (from < to) {
      // sendRawTo accepted the copies before the one it failed at, which the producer's accepted count tells.
      const acceptedBefore = this.producer.snapshot().recordsAccepted
      try {
        await this.producer.sendRawTo(topic, partition, records, from, to)
      } catch (err) {
        const failedAt = from + this.producer.snapshot().recordsAccepted - acceptedBefore
        this.accepted(topic, partition, records, from, failedAt)
        if (!isRecordRefusal(err) || this.config.exactlyOnce || failedAt >= to) throw err
        refused.push({
          topic: this.config.sourceTopic,
          partition,
          record: rawRecordAt(records, failedAt),
          code: err.code,
          reason: err.message,
          destination: topic
        })
        from = failedAt + 1
        continue
      }
      this.accepted(topic, partition, records, from, to)
      return
    }
  }

  private accepted(topic: string, partition: number, records: RawRecords, from: number, to: number): void {
    if (this.config.exactlyOnce) return
    const sent = this.sent.get(topic, partition)
    for (let i = from; i < to; i++) sent.push(records.offsets[i] as number)
  }
}
