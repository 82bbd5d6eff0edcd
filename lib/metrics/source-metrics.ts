import { Counter, Gauge, type Registry } from './prom-client.js'

/** What a file or stdin source reports: lines it split, and for a followed file set, each file's state and lag. */
export interface SourceMetrics {
  lineSplit(): void
  /** Files by state: `reading` (matched, open), `rotated` (renamed away, read to its end), `released` (closed). */
  files(state: string, count: number): void
  /** Bytes written to `file` but not yet read and handed on. */
  lagBytes(file: string, bytes: number): void
  forgetFile(file: string): void
  /** The read positions on disk (or in Kafka) were written this long ago. */
  positionAge(seconds: number): void
  /** A file rotated away while the shipper was down and gone before it came back: its unread lines are lost. */
  lostFile(): void
  /** A file the patterns match that is compressed (a rotated log's .gz): left unread. */
  compressedFile(format: string): void
  /** Records of file lines that failed delivery: their file's saved position stays before them until they are sent again. */
  recordsFailed(records: number): void
  /** Files whose saved position stays before lines that failed delivery. */
  heldFiles(count: number): void
  /** A held file rewound to its saved position: its lines from there are read and sent again in this run. */
  fileResent(): void
}

export function createSourceMetrics(registry: Registry): SourceMetrics {
  const split = new Counter({
    name: 'squeeze_source_lines_split_total',
    help: 'Lines longer than --max-line-bytes, each split into pieces of at most that many bytes, one record per piece',
    registers: [registry]
  })
  const files = new Gauge({
    name: 'squeeze_source_files',
    help: 'Files of the file set by state: reading (open, followed), rotated (renamed away, read to its end), released',
    labelNames: ['state'],
    registers: [registry]
  })
  const lag = new Gauge({
    name: 'squeeze_source_lag_bytes',
    help: 'Bytes written to a file but not yet read and handed to the producer',
    labelNames: ['file'],
    registers: [registry]
  })
  const age = new Gauge({
    name: 'squeeze_source_position_age_seconds',
    help: 'Seconds since the read positions were last saved (state directory, or positions topic with --exactly-once)',
    registers: [registry]
  })
  const lost = new Counter({
    name: 'squeeze_source_files_lost_total',
    help: 'Files rotated away while the shipper was down and gone before it came back: their unread lines are lost',
    registers: [registry]
  })
  const compressed = new Counter({
    name: 'squeeze_source_compressed_files_skipped_total',
    help: 'Files a --file glob matches that are compressed (gzip, zstd, bzip2, xz, lz4: rotated logs), left unread, by format',
    labelNames: ['format'],
    registers: [registry]
  })
  const failed = new Counter({
    name: 'squeeze_source_failed_records_total',
    help: "Records of file lines that failed delivery: their file's saved read position stays before them, so they (and the lines after them) are sent again, in the same run with --follow unless the broker refused them, else on the next start",
    registers: [registry]
  })
  const held = new Gauge({
    name: 'squeeze_source_held_files',
    help: 'Files whose saved read position stays before lines that failed delivery, until their lines read again are acknowledged (--follow) or the next start sends them again',
    registers: [registry]
  })
  const resent = new Counter({
    name: 'squeeze_source_resent_files_total',
    help: 'Times a file held by lines that failed delivery (timeout, retriable error) was read again from its saved read position in the same run (--follow, at least once); the acknowledged lines after the failed ones are sent again too',
    registers: [registry]
  })
  split.inc(0)
  resent.inc(0)
  lost.inc(0)
  failed.inc(0)
  return {
    lineSplit: () => split.inc(),
    files: (state, count) => files.set({ state }, count),
    lagBytes: (file, bytes) => lag.set({ file }, bytes),
    forgetFile: (file) => lag.remove({ file }),
    positionAge: (seconds) => age.set(seconds),
    lostFile: () => lost.inc(),
    compressedFile: (format) => compressed.inc({ format }),
    recordsFailed: (records) => failed.inc(records),
    heldFiles: (count) => held.set(count),
    fileResent: () => resent.inc()
  }
}
