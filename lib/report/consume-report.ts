import type { TopicMeasurement } from '../consumer/measure-topics.js'
import { formatBytes, formatNumber, formatRatio } from './table.js'
import { fitTable, WIDE, wrapLines, type TerminalLayout } from './terminal.js'

/** CPU seconds per GiB of uncompressed data: how a cost scales to a real topic's volume. */
function secondsPerGiB(seconds: number, bytes: number): number {
  return bytes === 0 ? Number.NaN : seconds / (bytes / 1024 ** 3)
}

/** Compact names for a terminal's width; the units go in a line above the table. */
const COMPACT_NAMES: Readonly<Record<string, string>> = {
  'on disk (all replicas)': 'on disk',
  'decompress cpu s/GiB': 'decompress',
  'decode cpu s/GiB': 'decode',
  uncompressed: 'raw'
}
const COMPACT_UNITS = 'decompress, decode: CPU s/GiB raw; on disk: all replicas; --wide: all columns'

export function renderConsumeReport(
  measurements: readonly TopicMeasurement[],
  baselineTopic?: string,
  layout: TerminalLayout = WIDE
): string {
  const baseline = measurements.find((m) => m.topic === baselineTopic)
  const rows = measurements.map((m) => {
    const seconds = Math.max((m.lastReadAt - m.firstReadAt) / 1000, 1e-3)
    const ratio = m.storedBytes === 0 ? Number.NaN : m.uncompressedBytes / m.storedBytes
    const vsBaseline = baseline === undefined || m.storedBytes === 0 ? Number.NaN : baseline.storedBytes / m.storedBytes
    return [
      m.topic,
      m.format ?? '-',
      m.codecs.join(',') || '-',
      String(m.records),
      String(m.batches),
      formatNumber(m.batches === 0 ? Number.NaN : m.records / m.batches, 0),
      formatBytes(m.uncompressedBytes),
      formatBytes(m.storedBytes),
      m.diskBytes === undefined ? '-' : formatBytes(m.diskBytes),
      formatRatio(ratio),
      ...(baseline === undefined ? [] : [formatRatio(vsBaseline)]),
      formatNumber(secondsPerGiB(m.decompressCpuSeconds, m.uncompressedBytes)),
      formatNumber(secondsPerGiB(m.decodeCpuSeconds, m.uncompressedBytes)),
      formatNumber(m.records / seconds, 0),
      String(m.corruptRecords + m.corruptBatches)
    ]
  })
  const headers = [
    'topic',
    'read as',
    'codec',
    'records',
    'batches',
    'rec/batch',
    'uncompressed',
    'fetched',
    'on disk (all replicas)',
    'ratio',
    ...(baseline === undefined ? [] : ['vs none']),
    'decompress cpu s/GiB',
    'decode cpu s/GiB',
    'records/s',
    'corrupt'
  ]
  if (layout.wide) return fitTable(headers, rows, layout)
  // Dropped first when the terminal is narrow: batch shape, then the raw and on-disk sizes, then throughput; then,
  // rather than cut topic names short, what the topic was read as and the bytes fetched.
  const indexes = (names: readonly string[]): number[] => names.map((h) => headers.indexOf(h))
  return [
    wrapLines(COMPACT_UNITS, layout),
    fitTable(
      headers.map((h) => COMPACT_NAMES[h] ?? h),
      rows,
      layout,
      indexes(['batches', 'rec/batch', 'uncompressed', 'on disk (all replicas)', 'records/s']),
      indexes(['read as', 'fetched'])
    )
  ].join('\n')
}
