import type { CodecSpec } from '../../codecs/index.js'
import { readHttpRequest } from '../../formats/http-request-reader.js'
import { BATCH } from '../../protocol/batch-layout.js'
import { writeBatchHeader } from '../../protocol/record-batch-builder.js'
import { readBatch } from '../../protocol/record-batch-reader.js'
import { FormatProjection, type FormatRow } from '../format-rows.js'
import type { ProjectedBatch, SourceRecord } from './rebatch.js'

/** Values a sample's first windows must all read as HttpRequest records for it to count as HTTP records. */
const PROBE_VALUES = 64

type Windows = ReadonlyArray<{ readonly partition: number; readonly records: readonly SourceRecord[] }>

/**
 * Whether a sample holds squeeze's HTTP records (Cap'n Proto HttpRequest): its first values, up to PROBE_VALUES,
 * all read as one. A topic of log lines or JSON fails at the first value (its bytes frame no Cap'n Proto message),
 * and a topic that mixes forms has no one record format for rows to compare against.
 */
export function isHttpSample(windows: Windows): boolean {
  let probed = 0
  for (const w of windows) {
    for (const r of w.records) {
      if (r.value === null) continue
      try {
        readHttpRequest(r.value)
      } catch {
        return false
      }
      if (++probed >= PROBE_VALUES) return true
    }
  }
  return probed > 0
}

/**
 * compare's format rows on a sample: the batches the projection compressed (`batches` calls back each in the order
 * it was pushed) rebuilt with the records as combined log lines and as JSON at `spec`, against `storedPerBatch`,
 * the Cap'n Proto records' stored bytes per batch at that target.
 */
export function sampleFormatRows(
  spec: CodecSpec,
  storedPerBatch: readonly number[],
  batches: (visit: (batch: ProjectedBatch) => void) => void
): FormatRow[] {
  const projection = new FormatProjection(spec)
  let index = 0
  batches((batch) => addProjectedBatch(projection, batch, storedPerBatch[index++] ?? 0))
  return projection.rows()
}

/** One re-batched batch into `projection`, as the batch a consumer reads, against its records' stored bytes. */
export function addProjectedBatch(projection: FormatProjection, batch: ProjectedBatch, storedBytes: number): void {
  const whole = Buffer.allocUnsafe(BATCH.HEADER_BYTES + batch.records.length)
  whole.set(batch.records, BATCH.HEADER_BYTES)
  writeBatchHeader(whole, {
    count: batch.count,
    attributes: 0,
    firstTimestamp: batch.firstTimestamp,
    maxTimestamp: batch.maxTimestamp
  })
  projection.addBatch(readBatch(whole, { verifyCrc: false }).records, storedBytes)
}
