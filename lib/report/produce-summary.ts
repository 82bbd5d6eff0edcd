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
  /** A file set's files whose saved positions stay before lines that failed delivery. */
  readonly heldFiles?: ReadonlyArray<{ readonly path: string; readonly offset: number }>
  /** Followed files: every line whose records failed delivery was read again and its records acknowledged. */
  readonly deliveryRecovered?: boolean
  /** False where no read positions are saved (--no-state): the held offsets are this run's only. */
  readonly positionsSaved?: boolean
  /** A file set's files left unread for being compressed. */
  readonly compressedFilesSkipped?: number
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
    deliveryOutcome(stats) +
    ((run.compressedFilesSkipped ?? 0) > 0
      ? `\ncompressed files left unread: ${run.compressedFilesSkipped} (the log names each; --exclude leaves them out)`
      : '') +
    heldNote(run.heldFiles ?? [], run.positionsSaved !== false) +
    (run.deliveryRecovered === true && stats.recordsFailed > 0
      ? '\nthe lines whose records failed delivery were read again and sent, and every one acknowledged'
      : '')
  )
}

/** Whether records are left undelivered: failed, and not sent again and acknowledged in the same run. */
export function undelivered(stats: ProducerStats, run: Pick<ProduceRunCounts, 'deliveryRecovered'>): boolean {
  return stats.recordsFailed > 0 && run.deliveryRecovered !== true
}

/**
 * Where the lines that failed delivery are sent again from: each held file's saved offset; without saved positions
 * the next start reads every file from its start, so only where the failed lines begin is named.
 */
function heldNote(held: ReadonlyArray<{ readonly path: string; readonly offset: number }>, saved: boolean): string {
  const first = held[0]
  if (first === undefined) return ''
  const where = `${first.path} from byte ${first.offset}${held.length > 1 ? ', ...' : ''}`
  if (!saved) {
    const files = held.length === 1 ? '1 file' : `${held.length} files`
    return `\nlines failed delivery in ${files} (${where}); no read positions are saved (--no-state): the next start reads every file from its start`
  }
  const files = held.length === 1 ? '1 file keeps its' : `${held.length} files keep their`
  return `\nlines failed delivery: ${files} saved read position before them (${where}); they and the lines after them are sent again on the next start`
}

/** Every accepted record is acknowledged or failed once the producer is closed; a gap says how many are not yet. */
export function deliveryOutcome(stats: ProducerStats): string {
  const unsettled = stats.recordsAccepted - stats.recordsAcked - stats.recordsFailed
  return (
    `accepted ${stats.recordsAccepted}: ${stats.recordsAcked} acknowledged, ${stats.recordsFailed} failed` +
    (unsettled === 0 ? '' : `, ${unsettled} without an outcome yet`)
  )
}
