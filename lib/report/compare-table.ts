import type { CompareReport, CompareTargetResult, RecompressionVerdict, Recommendation } from '../compare/compare-report.js'
import { formatBytes, formatNumber, renderTable } from './table.js'

export const COMPARE_HEADERS = [
  'target', 'records', 'batches', 'rec/batch', 'uncompressed', 'stored (broker)', 'ratio', 'vs none',
  'compress cpu s/GiB', 'compress MB/s/core', 'decompress cpu s/GiB', 'decode cpu s/GiB', 'consumer rec/s', 'recompression'
] as const

/** One row of text cells per target, in COMPARE_HEADERS order; shared by the terminal and Markdown renderers. */
export function compareRow(t: CompareTargetResult): string[] {
  return [
    t.target,
    String(t.records),
    String(t.batches),
    formatNumber(t.meanRecordsPerBatch, 0),
    formatBytes(t.uncompressedBytes),
    formatBytes(t.storedBytes),
    `${formatNumber(t.ratio)}x`,
    t.ratioVsNone === null ? '-' : `${formatNumber(t.ratioVsNone)}x`,
    formatNumber(t.compressCpuSecondsPerGiB),
    // none does no compression work, so a throughput would be a division by (almost) zero.
    t.codec === 'none' ? '-' : formatNumber(t.compressMBPerSecondPerCore, 0),
    formatNumber(t.decompressCpuSecondsPerGiB),
    formatNumber(t.decodeCpuSecondsPerGiB),
    formatNumber(t.consumerRecordsPerSecond, 0),
    formatVerdict(t.recompression)
  ]
}

export function formatVerdict(v: RecompressionVerdict): string {
  if (v.verdict === 'recompressed') return `RECOMPRESSED ${v.batchesRewritten}/${v.batchesChecked}`
  if (v.verdict === 'kept') return `kept ${v.batchesChecked}/${v.batchesChecked}`
  return 'unknown'
}

/** Bytes in the largest binary unit that keeps the number readable; TiB for fleet-sized daily savings. */
export function formatLargeBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-'
  const sign = bytes < 0 ? '-' : ''
  const abs = Math.abs(bytes)
  if (abs >= 1024 ** 5) return `${sign}${(abs / 1024 ** 5).toFixed(2)}PiB`
  if (abs >= 1024 ** 4) return `${sign}${(abs / 1024 ** 4).toFixed(2)}TiB`
  return `${sign}${formatBytes(Math.round(abs))}`
}

/** The recommendation as prose lines, without markup: what to run, why, and what it saves. */
export function recommendationLines(report: CompareReport): string[] {
  const rec: Recommendation | null = report.recommendation
  if (rec === null) return ['recommendation: none: no measured target meets the criteria (or every target was recompressed by the broker)']
  const lines = [`recommendation: ${rec.target} (${rec.criterion})`, `  ${rec.reason}`]
  const { replicationFactor, consumers } = report.settings
  lines.push(rec.bytesPerDaySaved === null
    ? '  bytes/day saved: unknown (no none target to compare with)'
    : `  bytes/day saved vs none: ${formatLargeBytes(rec.bytesPerDaySaved)}/day (replication factor ${replicationFactor} + ${consumers} consumer${consumers === 1 ? '' : 's'})`)
  return lines
}

/** The comparison for a terminal: one row per target, then the recommendation. */
export function renderCompareTable(report: CompareReport): string {
  const table = renderTable(COMPARE_HEADERS, report.targets.map(compareRow))
  return [table, '', ...recommendationLines(report)].join('\n')
}
