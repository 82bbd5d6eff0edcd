import type { CompareReport, CompareTargetResult, RecompressionVerdict, Recommendation } from '../compare/compare-report.js'
import { isKnownRate, type IngestRate, type RateSource } from '../compare/ingest-rate.js'
import { projectionLines } from './projection-text.js'
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
  if (v.verdict === 'not-checked') return 'not checked (read-only)'
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

const RATE_SOURCES: Readonly<Record<RateSource, string>> = {
  'broker-offsets': 'broker offsets',
  'record-timestamps': 'the copied records\' timestamps',
  'line-timestamps': 'the lines\' own timestamps',
  'generator-timestamps': 'the generator\'s clock'
}

/** The ingest rate in one line: how fast, from which evidence, over which window; or why it is unknown. */
export function ingestRateText(rate: IngestRate): string {
  if (!isKnownRate(rate)) return `unknown (${rate.unknown})`
  const { window } = rate
  const lookback = window.lookbackSeconds === null ? '' : ` over the last ${formatNumber(window.lookbackSeconds / 3600, window.lookbackSeconds % 3600 === 0 ? 0 : 2)} h`
  return `${formatBytes(Math.round(rate.bytesPerSecond))}/s (${formatNumber(rate.recordsPerSecond)} records/s x ${formatBytes(Math.round(rate.bytesPerRecord))}) ` +
    `from ${RATE_SOURCES[window.source]}${lookback}: ${window.records} records stamped ${window.from} to ${window.to}`
}

/** What the recommendation saves against none, as lines: per day at the ingest rate when known, always per GiB of input. */
export function savingLines(report: CompareReport, rec: Recommendation): string[] {
  const { replicationFactor, consumers } = report.settings
  if (rec.bytesSavedPerGiB === null) return ['bytes/day saved: unknown (no none target to compare with)']
  const across = `(replication factor ${replicationFactor} + ${consumers} consumer${consumers === 1 ? '' : 's'})`
  return [
    rec.bytesPerDaySaved === null
      ? 'bytes/day saved: unknown (no trustworthy ingest rate; see the saving per GiB of input)'
      : `bytes/day saved vs none: ${formatLargeBytes(rec.bytesPerDaySaved)}/day ${across}`,
    `bytes saved per GiB of input vs none: ${formatLargeBytes(rec.bytesSavedPerGiB)} ${across}`
  ]
}

type Carriers = Pick<CompareReport['settings'], 'replicationFactor' | 'consumers'>

/**
 * Why the recommendation: the rule that picked it with the figures it was picked on, what it saves against
 * none counted once per replica and once per consumer, and for the knee the next step up the front.
 */
export function recommendationReason(rec: Recommendation, carriers: Carriers): string {
  const { chosen } = rec
  const costs = `${formatNumber(chosen.ratio)}x at ${formatNumber(chosen.compressCpuSecondsPerGiB)} compress CPU s/GiB`
  let why: string
  let tail = ''
  switch (rec.criterion) {
    case 'cpu-budget': {
      const also = rec.targetRatio === null ? '' : ` and at least ${formatNumber(rec.targetRatio)}x`
      why = `${rec.target} stores the fewest bytes (${formatBytes(chosen.storedBytes)}, ${formatNumber(chosen.ratio)}x) within ` +
        `${formatNumber(rec.cpuBudgetSecondsPerGiB)} compress CPU s/GiB${also}: it costs ${formatNumber(chosen.compressCpuSecondsPerGiB)} s/GiB`
      break
    }
    case 'target-ratio':
      why = `${rec.target} is the cheapest target reaching ${formatNumber(rec.targetRatio)}x: ${costs}`
      break
    case 'best-ratio-per-cpu': {
      why = `${rec.target} is the knee of the ratio-vs-CPU trade-off across ${rec.undominated} undominated target${rec.undominated === 1 ? '' : 's'}: ${costs}`
      const next = rec.nextStep
      if (next !== null) tail = `; the next step up, ${next.target}, reaches ${formatNumber(next.ratio)}x for ${formatNumber(next.compressCpuSecondsPerGiB)} s/GiB`
    }
  }
  const { replicationFactor, consumers } = carriers
  const across = `against none across ${replicationFactor} replica${replicationFactor === 1 ? '' : 's'} and ${consumers} consumer${consumers === 1 ? '' : 's'}`
  const saved = rec.bytesPerDaySaved !== null ? `, saving ${formatLargeBytes(rec.bytesPerDaySaved)} per day ${across}`
    : rec.bytesSavedPerGiB !== null ? `, saving ${formatLargeBytes(rec.bytesSavedPerGiB)} per GiB of input ${across} (ingest rate unknown)` : ''
  return `${why}${saved}${tail}.`
}

/** The recommendation as prose lines, without markup: what to run, why, and what it saves. */
export function recommendationLines(report: CompareReport): string[] {
  const rec: Recommendation | null = report.recommendation
  const rate = `ingest rate: ${ingestRateText(report.source.ingestRate)}`
  if (rec === null) return ['recommendation: none: no measured target meets the criteria (or every target was recompressed by the broker)', rate]
  return [`recommendation: ${rec.target} (${rec.criterion})`, `  ${recommendationReason(rec, report.settings)}`, `  ${rate}`, ...savingLines(report, rec).map((l) => `  ${l}`)]
}

/** The comparison for a terminal: one row per target, then the recommendation. */
export function renderCompareTable(report: CompareReport): string {
  const table = renderTable(COMPARE_HEADERS, report.targets.map(compareRow))
  const projection = projectionLines(report)
  return [...projection.before, table, '', ...recommendationLines(report), ...projection.after].join('\n')
}
