import type { CompareReport } from '../compare/compare-report.js'
import type { BatchingSweep, ProjectionDetails } from '../compare/projection/projection-details.js'
import { formatBytes, formatNumber, formatRatio } from './table.js'
import { fitTable, WIDE, type TerminalLayout } from './terminal.js'

/** What a projection report says beside the copy mode's table: how it was made and the intervals (before), the what-if (after). */
export function projectionLines(
  report: CompareReport,
  layout: TerminalLayout = WIDE
): { before: string[]; after: string[] } {
  const p = report.projection
  if (report.mode !== 'projection' || p === undefined) return { before: [], after: [] }
  const before = [
    `mode: read-only projection (nothing written; stored bytes are the producer's sealed batches, computed in memory on ${p.threads} thread${p.threads === 1 ? '' : 's'})`,
    `batching: linger.ms ${report.settings.lingerMs} on the records' own timestamps, batch.size ${formatBytes(report.settings.batchSizeBytes)}; mean linger used ${formatNumber(p.meanLingerUsedMs, 0)} ms`,
    ...samplingLines(p),
    `ratio 95% interval (bootstrap over batches): ${p.intervals.map((i) => `${i.target} ${formatNumber(i.low)}-${formatNumber(i.high)}x`).join(', ')}`
  ]
  return { before, after: sweepLines(p, layout) }
}

export const SWEEP_HEADERS = ['target', 'linger.ms', 'batch.size', 'ratio', 'rec/batch', 'linger used ms'] as const

/** One text row per what-if cell, in SWEEP_HEADERS order. */
export function sweepRows(sweep: BatchingSweep): string[][] {
  return sweep.cells.map((c) => [
    c.target,
    String(c.lingerMs),
    formatBytes(c.batchSizeBytes),
    formatRatio(c.ratio),
    formatNumber(c.meanRecordsPerBatch, 1),
    formatNumber(c.meanLingerUsedMs, 0)
  ])
}

/** Where batches stop growing, and the linger.ms advice, as sentences. */
export function sweepFindings(sweep: BatchingSweep): string[] {
  const stops = sweep.growthStops.map((s) =>
    s.batchSizeBytes === null
      ? `at linger.ms ${s.lingerMs} batches still grow up to the largest batch.size tried`
      : `at linger.ms ${s.lingerMs} batches stop growing at batch.size ${formatBytes(s.batchSizeBytes)}: a larger batch.size does not raise the ratio`
  )
  const a = sweep.advice
  const advice =
    a === null
      ? []
      : [
          `raise linger.ms to ${a.toLingerMs} for ${a.target}: the ratio goes from ${formatNumber(a.fromRatio)}x to ${formatNumber(a.toRatio)}x, ` +
            `at ${formatNumber(a.addedLatencyMs, 0)} ms more mean latency per batch (batch.size ${formatBytes(a.batchSizeBytes)})`
        ]
  return [...stops, ...advice]
}

function sweepLines(p: ProjectionDetails, layout: TerminalLayout): string[] {
  if (p.sweep === null) return []
  return [
    '',
    'batching what-if:',
    fitTable(SWEEP_HEADERS, sweepRows(p.sweep), layout, [5, 4]),
    ...sweepFindings(p.sweep)
  ]
}

function samplingLines(p: ProjectionDetails): string[] {
  const s = p.sampling
  if (s === null) return []
  const sampled = s.windows.reduce((n, w) => n + w.records, 0)
  const asked =
    s.requestedBytes !== null
      ? `${formatBytes(s.requestedBytes)} of record bytes asked`
      : `${s.requestedRecords} records asked`
  return [
    `sample: ${sampled} of ${s.topicRecords} records, ${formatBytes(s.bytes)} of record bytes (${asked}) in ${s.windows.length} windows ` +
      `(${s.windowsPerPartition} per partition x ${s.partitions} partitions), stamped ${new Date(s.fromMs).toISOString()} to ${new Date(s.toMs).toISOString()}`
  ]
}
