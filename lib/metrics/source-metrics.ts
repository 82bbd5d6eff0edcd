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
  split.inc(0)
  lost.inc(0)
  return {
    lineSplit: () => split.inc(),
    files: (state, count) => files.set({ state }, count),
    lagBytes: (file, bytes) => lag.set({ file }, bytes),
    forgetFile: (file) => lag.remove({ file }),
    positionAge: (seconds) => age.set(seconds),
    lostFile: () => lost.inc()
  }
}
