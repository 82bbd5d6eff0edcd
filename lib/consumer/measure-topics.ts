import { codecNameForId } from '../codecs/index.js'
import { errorCode, errorMessage } from '../errors.js'
import { rangeDecoder, type LogFormat } from '../formats/log-format.js'
import type { Logger } from '../log/logger.js'
import type { ConsumerMetricsSink } from '../metrics/consumer-metrics.js'
import { processCpuSeconds } from '../metrics/thread-cpu.js'
import type { PoisonRecord } from '../protocol/dead-letter.js'
import type { IncomingRecord } from '../protocol/record.js'
import type { ReadBatch } from '../protocol/record-batch-reader.js'
import type { BatchEvent, CorruptBatchEvent, ReaderHandlers } from './partition-reader.js'

/** Everything squeeze measured while reading one topic. Bytes are as stored (compressed) and as decompressed. */
export interface TopicMeasurement {
  readonly topic: string
  codecs: string[]
  records: number
  batches: number
  storedBytes: number
  uncompressedBytes: number
  decompressCpuSeconds: number
  decodeCpuSeconds: number
  corruptRecords: number
  corruptBatches: number
  firstReadAt: number
  lastReadAt: number
  /** Bytes the topic's replicas hold on broker disks (DescribeLogDirs), when asked for. */
  diskBytes?: number
  /** The kind its values were decoded as, `none` when they were not; unset before any record was read. */
  format?: string
}

/** The largest stored batch a dead letter carries: below the dead-letter producer's default max.request.size. */
const DEAD_LETTER_BATCH_BYTES = 512 * 1024

function copyRecord(record: IncomingRecord): IncomingRecord {
  const copy = (b: Buffer | null): Buffer | null => (b === null ? null : Buffer.from(b))
  return {
    ...record,
    key: copy(record.key),
    value: copy(record.value),
    headers: record.headers.map((h) => ({ key: h.key, value: copy(h.value) }))
  }
}

/**
 * Decodes every record of every batch with the topic's log format and adds up bytes and CPU per topic.
 * A record that does not decode is counted and logged with its coordinates, and reading goes on.
 */
export class TopicMeasurements implements ReaderHandlers {
  private readonly byTopic = new Map<string, TopicMeasurement>()

  constructor(
    private readonly formatFor: (topic: string, batch: ReadBatch) => LogFormat | null,
    private readonly log: Logger,
    private readonly metrics?: ConsumerMetricsSink,
    private readonly onPoison?: (poison: PoisonRecord) => void
  ) {}

  results(): TopicMeasurement[] {
    return [...this.byTopic.values()]
  }

  get(topic: string): TopicMeasurement {
    let measurement = this.byTopic.get(topic)
    if (measurement === undefined) {
      measurement = {
        topic,
        codecs: [],
        records: 0,
        batches: 0,
        storedBytes: 0,
        uncompressedBytes: 0,
        decompressCpuSeconds: 0,
        decodeCpuSeconds: 0,
        corruptRecords: 0,
        corruptBatches: 0,
        firstReadAt: Date.now(),
        lastReadAt: Date.now()
      }
      this.byTopic.set(topic, measurement)
    }
    return measurement
  }

  onBatch(event: BatchEvent): void {
    const { topic, partition, batch } = event
    if (batch.isControl) return
    const m = this.get(topic)
    const format = this.formatFor(topic, batch)
    if (batch.recordCount > 0) m.format = format?.kind ?? 'none'
    const before = processCpuSeconds()
    let corrupt = 0
    if (format !== null) {
      // In place where the format can (no record objects or views); a record that fails is built for the report.
      const decodeAt = rangeDecoder(format)
      // All at once where the format can: decodeAt then reads only the values that pass left (corrupt ones among them).
      const done = format.decodeValues?.(batch.values) ?? undefined
      batch.forEachValue((bytes, start, end, offset) => {
        try {
          decodeAt(bytes, start, end)
        } catch (err) {
          corrupt++
          this.metrics?.corrupt(topic, 'record', errorCode(err))
          const record = this.onPoison === undefined ? undefined : batch.records.find((r) => r.offset === offset)
          // A copy: the batch's memory may be reused once onBatch returns, and the dead-letter send can wait.
          if (record !== undefined)
            this.onPoison?.({
              topic,
              partition,
              record: copyRecord(record),
              code: errorCode(err),
              reason: errorMessage(err)
            })
          if (m.corruptRecords + corrupt <= 20)
            this.log.warn(
              { topic, partition, offset, code: errorCode(err), reason: errorMessage(err) },
              'record does not decode; counted and skipped'
            )
        }
      }, done)
    }
    const decodeCpuSeconds = processCpuSeconds() - before + event.framingCpuSeconds
    const codec = codecNameForId(batch.codecId) ?? `id${batch.codecId}`
    if (!m.codecs.includes(codec)) m.codecs.push(codec)
    m.records += batch.recordCount
    m.batches++
    m.storedBytes += batch.storedBytes
    m.uncompressedBytes += batch.uncompressedBytes
    m.decompressCpuSeconds += batch.decompressCpuSeconds
    m.decodeCpuSeconds += decodeCpuSeconds
    m.corruptRecords += corrupt
    m.lastReadAt = Date.now()
    this.metrics?.batchRead(topic, codec, {
      records: batch.recordCount,
      storedBytes: batch.storedBytes,
      uncompressedBytes: batch.uncompressedBytes,
      decompressCpuSeconds: batch.decompressCpuSeconds,
      decodeCpuSeconds
    })
  }

  onCorruptBatch(event: CorruptBatchEvent): void {
    const m = this.get(event.topic)
    m.corruptBatches++
    this.metrics?.corrupt(event.topic, 'batch', event.error.code)
    const { topic, partition, baseOffset, lastOffset, reason } = event
    this.log.error(
      { topic, partition, baseOffset, lastOffset, code: event.error.code, reason },
      `skipping corrupt batch: ${event.error.message}`
    )
    // Its records cannot be read, so the dead letter holds the batch as stored, for whoever looks into it.
    const value =
      event.bytes === undefined || event.bytes.length > DEAD_LETTER_BATCH_BYTES ? null : Buffer.from(event.bytes)
    const headers = [{ key: 'squeeze.source.last.offset', value: Buffer.from(String(lastOffset)) }]
    const record = { offset: baseOffset, timestamp: Date.now(), key: null, value, headers }
    this.onPoison?.({ topic, partition, record, code: event.error.code, reason: event.error.message })
  }
}
