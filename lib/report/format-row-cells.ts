import type { FormatRow } from '../compare/format-rows.js'
import { formatBytes, formatNumber, formatRatio } from './table.js'

const LABELS: Readonly<Record<FormatRow['format'], string>> = { text: 'as text lines', json: 'as JSON' }

/**
 * A format row in the compare table's columns (COMPARE_HEADERS): the recommended codec's batches holding the
 * records as text lines or JSON. Compression, consumer rate and recompression are the target row's own.
 */
export function formatRowCells(f: FormatRow, replicationFactor: number): string[] {
  return [
    `${f.target} ${LABELS[f.format]} (${formatNumber(f.storedVsRecords)}x of records)`,
    String(f.records),
    String(f.batches),
    formatNumber(f.batches === 0 ? 0 : f.records / f.batches, 0),
    formatBytes(f.uncompressedBytes),
    formatBytes(f.storedBytes),
    formatBytes(f.storedBytes * replicationFactor),
    formatRatio(f.ratio),
    '-',
    '-',
    '-',
    '-',
    formatNumber(f.decompressCpuSecondsPerGiB),
    formatNumber(f.decodeCpuSecondsPerGiB),
    '-',
    'projected'
  ]
}
