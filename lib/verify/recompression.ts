/**
 * Did the broker store the producer's batches as they were sent, or rebuild (and recompress) them?
 *
 * A broker keeps a magic-2 batch byte for byte only when the topic's compression.type is `producer` (or
 * names the batch's own codec) and the inner offset deltas are 0..n-1. Otherwise it decompresses, rebuilds
 * and recompresses the batch with its own codec and level, and every measurement of the producer's codec
 * is then a measurement of the broker's instead. The CRC-32C covers attributes..end of the batch (not the
 * base offset or partition leader epoch, which the broker always assigns), so an equal CRC and an equal
 * size mean the stored batch is the one the producer sent.
 *
 * Caveat: on a topic with message.timestamp.type=LogAppendTime the broker rewrites maxTimestamp and the
 * attributes in place and recomputes the CRC; such batches show up as rewritten although their records
 * section was kept.
 */
import type { AckedBatch } from '../producer/producer.js'
import type { BatchHeader } from '../protocol/record-batch-reader.js'
import { codecNameForId } from '../codecs/index.js'

/** One batch as read back, with where it was read from. */
export interface StoredBatch {
  readonly topic: string
  readonly partition: number
  readonly batch: BatchHeader
}

export type BatchFate = 'kept' | 'rewritten' | 'missing'

/** One acknowledged batch the broker did not keep as sent. */
export interface RecompressionExample {
  readonly topic: string
  readonly partition: number
  readonly baseOffset: number
  readonly fate: Exclude<BatchFate, 'kept'>
  readonly records: number
  readonly sentCrc: number
  readonly sentBytes: number
  /** Undefined when no stored batch starts at baseOffset. */
  readonly storedCrc?: number
  readonly storedBytes?: number
  readonly storedCodec?: string
  readonly storedRecords?: number
}

export interface RecompressionReport {
  /** Acknowledged batches found in the log at their topic/partition/baseOffset and compared. */
  readonly batchesChecked: number
  /** Same CRC-32C and size as sent. */
  readonly batchesKept: number
  /** Found, but with another CRC or size: the broker rebuilt them. */
  readonly batchesRewritten: number
  /** Acknowledged batches with no stored batch at their base offset (not read back, deleted, or acks=0). */
  readonly batchesMissing: number
  /** Bytes the producer sent / the broker stored, over the batches checked. */
  readonly sentBytes: number
  readonly storedBytes: number
  /** Up to `maxExamples` batches that were rewritten or missing, rewritten first. */
  readonly examples: readonly RecompressionExample[]
  /**
   * 'recompressed' when any checked batch was rewritten; 'kept' otherwise. A 'kept' verdict is only as good
   * as the coverage: see `complete`.
   */
  readonly verdict: 'kept' | 'recompressed'
  /** Every acknowledged batch was found and compared (batchesChecked > 0 and batchesMissing === 0). */
  readonly complete: boolean
}

export interface RecompressionOptions {
  /** Most examples to return (default 5). */
  readonly maxExamples?: number
}

function key(topic: string, partition: number, baseOffset: number): string {
  return `${topic}\u0000${partition}\u0000${baseOffset}`
}

/** Compares what the producer had acknowledged with what a reader found in the log. */
export function checkRecompression(
  acked: readonly AckedBatch[],
  stored: readonly StoredBatch[],
  options: RecompressionOptions = {}
): RecompressionReport {
  const maxExamples = options.maxExamples ?? 5
  const index = new Map<string, BatchHeader>()
  for (const { topic, partition, batch } of stored) {
    if (batch.isControl) continue
    index.set(key(topic, partition, batch.baseOffset), batch)
  }
  let checked = 0
  let kept = 0
  let sentBytes = 0
  let storedBytes = 0
  const rewritten: RecompressionExample[] = []
  const missing: RecompressionExample[] = []
  for (const sent of acked) {
    const found = sent.baseOffset < 0 ? undefined : index.get(key(sent.topic, sent.partition, sent.baseOffset))
    const base = {
      topic: sent.topic,
      partition: sent.partition,
      baseOffset: sent.baseOffset,
      records: sent.records,
      sentCrc: sent.crc,
      sentBytes: sent.sizeBytes
    }
    if (found === undefined) {
      missing.push({ ...base, fate: 'missing' })
      continue
    }
    checked++
    sentBytes += sent.sizeBytes
    storedBytes += found.storedBytes
    if (found.crc === sent.crc >>> 0 && found.storedBytes === sent.sizeBytes) {
      kept++
      continue
    }
    rewritten.push({
      ...base,
      fate: 'rewritten',
      storedCrc: found.crc,
      storedBytes: found.storedBytes,
      storedCodec: codecNameForId(found.codecId) ?? `codec-${found.codecId}`,
      storedRecords: found.lastOffset - found.baseOffset + 1
    })
  }
  return {
    batchesChecked: checked,
    batchesKept: kept,
    batchesRewritten: rewritten.length,
    batchesMissing: missing.length,
    sentBytes,
    storedBytes,
    examples: [...rewritten, ...missing].slice(0, Math.max(0, maxExamples)),
    verdict: rewritten.length > 0 ? 'recompressed' : 'kept',
    complete: checked > 0 && missing.length === 0
  }
}
