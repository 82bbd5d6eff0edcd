import type { ProducerStats } from '../producer/producer.js'

/** What the run did beside delivering: the lines it could not parse or send whole. */
export interface ProduceRunCounts {
  readonly topic: string
  /** The codec as --codec names it (formatCodecSpec). */
  readonly codec: string
  readonly parseErrors: number
  /** What a line that does not parse became (--on-parse-error). */
  readonly onParseError: string
  /** Records over the producer's size limit. */
  readonly rejected: number
  readonly linesSplit: number
}

/** The two lines `squeeze produce` ends with: what was sent and stored, then what was not and every record's outcome. */
export function produceSummary(stats: ProducerStats, run: ProduceRunCounts): string {
  const ratio = stats.compressedBytes === 0 ? 0 : stats.uncompressedBytes / stats.compressedBytes
  return (
    `produced ${stats.recordsAcked} records to ${run.topic} with ${run.codec}: ${stats.batchesAcked} batches, ` +
    `${stats.uncompressedBytes} bytes uncompressed -> ${stats.compressedBytes} bytes sent (${ratio.toFixed(2)}x)\n` +
    `compression cpu ${stats.compressCpuSeconds.toFixed(3)} s; ` +
    `lines not parsed: ${run.parseErrors} (${run.onParseError}), records too large: ${run.rejected}, ` +
    `lines split: ${run.linesSplit}, undelivered: ${stats.recordsFailed}; ` +
    deliveryOutcome(stats)
  )
}

/** Every accepted record is acknowledged or failed once the producer is closed; a gap says how many are not yet. */
export function deliveryOutcome(stats: ProducerStats): string {
  const unsettled = stats.recordsAccepted - stats.recordsAcked - stats.recordsFailed
  return (
    `accepted ${stats.recordsAccepted}: ${stats.recordsAcked} acknowledged, ${stats.recordsFailed} failed` +
    (unsettled === 0 ? '' : `, ${unsettled} without an outcome yet`)
  )
}
