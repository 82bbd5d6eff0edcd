import { createCodec, formatCodecSpec, type Codec, type CodecSpec } from '../codecs/index.js'
import { combinedLogLine, httpRequestJson } from '../formats/http-as-text.js'
import { parseCombinedLine } from '../formats/combined-log.js'
import { readHttpRequest } from '../formats/http-request-reader.js'
import type { HttpRequestFields } from '../formats/http-request.js'
import { threadCpuSeconds } from '../metrics/thread-cpu.js'
import { buildBatch } from '../protocol/record-batch-builder.js'
import { readBatch } from '../protocol/record-batch-reader.js'
import type { IncomingRecord, OutgoingRecord } from '../protocol/record.js'

/** The forms HTTP records can be stored in besides Cap'n Proto: as combined log lines, and as JSON. */
export const RECORD_FORMATS = ['text', 'json'] as const
export type RecordFormat = (typeof RECORD_FORMATS)[number]

/**
 * What the same records cost stored in another form, at one codec and level, in the same batches: built and
 * compressed in memory (a log segment holds exactly its batches), then read back as a consumer would.
 */
export interface FormatRow {
  readonly format: RecordFormat
  /** The codec and level, as named (the recommended target's). */
  readonly target: string
  readonly records: number
  readonly batches: number
  /** Batch bytes before compression (header plus records). */
  readonly uncompressedBytes: number
  /** Sum of the compressed batches' sizes: what one replica would store. */
  readonly storedBytes: number
  readonly ratio: number
  /** This form's stored bytes / the Cap'n Proto records' (the target's own row) in the same batches and codec. */
  readonly storedVsRecords: number
  readonly decompressCpuSecondsPerGiB: number
  /** Parsing each value back into its fields (the combined log line, or JSON.parse), per GiB uncompressed. */
  readonly decodeCpuSecondsPerGiB: number
  /** Values that did not read as HttpRequest records: left out of this row. */
  readonly skippedRecords: number
}

const GIB = 1024 ** 3

const RENDER: Readonly<Record<RecordFormat, (fields: HttpRequestFields) => string>> = {
  text: combinedLogLine,
  json: httpRequestJson
}

const PARSE: Readonly<Record<RecordFormat, (text: string) => unknown>> = {
  text: parseCombinedLine,
  json: (text) => JSON.parse(text)
}

interface Totals {
  records: number
  batches: number
  uncompressedBytes: number
  storedBytes: number
  decompressCpuSeconds: number
  decodeCpuSeconds: number
}

function noTotals(): Totals {
  return { records: 0, batches: 0, uncompressedBytes: 0, storedBytes: 0, decompressCpuSeconds: 0, decodeCpuSeconds: 0 }
}

/**
 * Takes a topic's HttpRequest batches one at a time (addBatch) and rebuilds each, with the same keys, headers and
 * timestamps, once per form at `spec`; rows() gives what each form stores and costs to read.
 */
export class FormatProjection {
  private readonly codec: Codec
  private readonly totals = new Map<RecordFormat, Totals>(RECORD_FORMATS.map((f) => [f, noTotals()]))
  private recordsStoredBytes = 0
  private skipped = 0

  constructor(private readonly spec: CodecSpec) {
    this.codec = createCodec(spec)
  }

  /**
   * One batch of HttpRequest records as read, and what it takes stored as it is (its size in the log). A value
   * that is not an HttpRequest is left out of both forms and counted (skippedRecords).
   */
  addBatch(records: readonly IncomingRecord[], storedBytes: number): void {
    if (records.length === 0) return
    this.recordsStoredBytes += storedBytes
    const decoded: Array<{ record: IncomingRecord; fields: HttpRequestFields | null }> = []
    for (const record of records) {
      try {
        decoded.push({ record, fields: record.value === null ? null : readHttpRequest(record.value) })
      } catch {
        this.skipped++
      }
    }
    if (decoded.length === 0) return
    for (const format of RECORD_FORMATS) {
      const render = RENDER[format]
      const rendered: OutgoingRecord[] = decoded.map(({ record: r, fields }) => ({
        key: r.key,
        value: fields === null ? null : Buffer.from(render(fields)),
        headers: r.headers,
        timestamp: r.timestamp
      }))
      const sealed = buildBatch(rendered, this.codec)
      const totals = this.totals.get(format) as Totals
      totals.records += rendered.length
      totals.batches++
      totals.uncompressedBytes += sealed.uncompressedBytes
      totals.storedBytes += sealed.bytes.length
      this.readBack(format, sealed.bytes, totals)
    }
  }

  rows(): FormatRow[] {
    return RECORD_FORMATS.map((format) => {
      const t = this.totals.get(format) as Totals
      const gib = t.uncompressedBytes / GIB
      const perGiB = (seconds: number): number => (gib === 0 ? 0 : seconds / gib)
      return {
        format,
        target: formatCodecSpec(this.spec),
        records: t.records,
        batches: t.batches,
        uncompressedBytes: t.uncompressedBytes,
        storedBytes: t.storedBytes,
        ratio: t.storedBytes === 0 ? 0 : t.uncompressedBytes / t.storedBytes,
        storedVsRecords: this.recordsStoredBytes === 0 ? 0 : t.storedBytes / this.recordsStoredBytes,
        decompressCpuSecondsPerGiB: perGiB(t.decompressCpuSeconds),
        decodeCpuSecondsPerGiB: perGiB(t.decodeCpuSeconds),
        skippedRecords: this.skipped
      }
    })
  }

  /** A consumer's read of the batch: decompression as readBatch measures it, then every value parsed back. */
  private readBack(format: RecordFormat, bytes: Buffer, totals: Totals): void {
    const batch = readBatch(bytes, { cpuSeconds: threadCpuSeconds })
    totals.decompressCpuSeconds += batch.decompressCpuSeconds
    const parse = PARSE[format]
    const before = threadCpuSeconds()
    batch.forEachValue((body, start, end) => {
      parse(body.toString('utf8', start, end))
    })
    totals.decodeCpuSeconds += Math.max(0, threadCpuSeconds() - before)
  }
}
