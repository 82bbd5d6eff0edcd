import type {
  CompareReport,
  CompareTargetResult,
  RecompressionVerdict,
  Recommendation
} from '../compare/compare-report.js'
import { isKnownRate, type IngestRate, type RateSource } from '../compare/ingest-rate.js'
import type { CurrentBaseline } from '../compare/baseline.js'
import { againstCurrentLines, currentSummary } from './compare-current.js'
import { formatRowCells } from './format-row-cells.js'
import { projectionLines } from './projection-text.js'
import { savingSplitText, savingsTable } from './savings-text.js'
import { formatBytes, formatLargeBytes, formatNumber, formatRatio, renderTable } from './table.js'
import { fitTable, WIDE, wrapLines, type TerminalLayout } from './terminal.js'

export const COMPARE_HEADERS = [
  'target',
  'records',
  'batches',
  'rec/batch',
  'uncompressed',
  'stored per replica',
  'stored all replicas',
  'ratio',
  'vs none',
  'stored vs current',
  'compress cpu s/GiB',
  'compress MB/s/core',
  'decompress cpu s/GiB',
  'decode cpu s/GiB',
  'consumer rec/s',
  'recompression'
] as const

/** The rows in COMPARE_HEADERS order, the current baseline first; shared by the terminal and Markdown renderers. */
export function compareRows(report: CompareReport): string[][] {
  const { current } = report
  const rows = report.targets.map((t, i) => compareRow(t, current?.savings[i]?.storedShare ?? null))
  const formats = (report.formats ?? []).map((f) => formatRowCells(f, report.settings.replicationFactor))
  return [...(current === null ? [] : [currentRow(current, report.settings.replicationFactor)]), ...rows, ...formats]
}

type SizeFigures = Pick<
  CompareTargetResult,
  'records' | 'batches' | 'meanRecordsPerBatch' | 'uncompressedBytes' | 'storedBytes' | 'ratio' | 'ratioVsNone'
>

/** The cells from target to vs none, alike for the baseline and the targets. */
function sizeCells(name: string, f: SizeFigures, storedAllReplicas: number): string[] {
  return [
    name,
    String(f.records),
    String(f.batches),
    formatNumber(f.meanRecordsPerBatch, 0),
    formatBytes(f.uncompressedBytes),
    formatBytes(f.storedBytes),
    formatBytes(storedAllReplicas),
    formatRatio(f.ratio),
    f.ratioVsNone === null ? '-' : formatRatio(f.ratioVsNone)
  ]
}

/**
 * What the topic stores today: no compress figures (its producers paid them), read back as a consumer would. Its
 * batches were read from one replica; every replica of the source holds the same bytes.
 */
function currentRow({ row }: CurrentBaseline, replicationFactor: number): string[] {
  return [
    ...sizeCells(`${row.label}: ${row.codec}`, row, row.storedBytes * replicationFactor),
    '1.00x',
    '-',
    '-',
    formatNumber(row.decompressCpuSecondsPerGiB),
    '-',
    '-',
    'as stored'
  ]
}

/** The target as named, and for codec:adaptive the levels it used: `zstd:adaptive (3×41%, 6×59%)`. */
export function targetLabel(t: Pick<CompareTargetResult, 'target' | 'levelMix'>): string {
  if (t.levelMix === undefined || t.levelMix.length === 0) return t.target
  return `${t.target} (${t.levelMix.map((m) => `${m.level}×${Math.round(m.share * 100)}%`).join(', ')})`
}

/** One row of text cells per target, in COMPARE_HEADERS order. */
export function compareRow(t: CompareTargetResult, storedVsCurrent: number | null = null): string[] {
  return [
    ...sizeCells(targetLabel(t), t, t.storedBytesAllReplicas),
    storedVsCurrent === null ? '-' : formatRatio(storedVsCurrent),
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

const RATE_SOURCES: Readonly<Record<RateSource, string>> = {
  'broker-offsets': 'broker offsets',
  'record-timestamps': "the copied records' timestamps",
  'line-timestamps': "the lines' own timestamps",
  'generator-timestamps': "the generator's clock"
}

/** The ingest rate in one line: how fast, from which evidence, over which window; or why it is unknown. */
export function ingestRateText(rate: IngestRate): string {
  if (!isKnownRate(rate)) return `unknown (${rate.unknown})`
  const { window } = rate
  // Broker offsets without a lookback were read over the span a --sample covers.
  const lookback =
    window.lookbackSeconds !== null
      ? ` over the last ${formatNumber(window.lookbackSeconds / 3600, window.lookbackSeconds % 3600 === 0 ? 0 : 2)} h`
      : window.source === 'broker-offsets'
        ? ' over the sampled time span'
        : ''
  return (
    `${formatBytes(Math.round(rate.bytesPerSecond))}/s (${formatNumber(rate.recordsPerSecond)} records/s x ${formatBytes(Math.round(rate.bytesPerRecord))}) ` +
    `from ${RATE_SOURCES[window.source]}${lookback}: ${window.records} records stamped ${window.from} to ${window.to}`
  )
}

/** What the recommendation saves against none, as lines: per day at the ingest rate when known, always per GiB of input; disk and fetch apart. */
export function savingLines(report: CompareReport, rec: Recommendation): string[] {
  const perGiB = savingSplitText(report, rec.target, 'GiB')
  if (perGiB === null) return ['bytes/day saved: unknown (no none target to compare with)']
  const perDay = savingSplitText(report, rec.target, 'day')
  return [
    perDay === null
      ? 'bytes/day saved: unknown (no trustworthy ingest rate; see the saving per GiB of input)'
      : `bytes/day saved vs none: ${perDay}`,
    `bytes saved per GiB of input vs none: ${perGiB}`
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
      why =
        `${rec.target} stores the fewest bytes (${formatBytes(chosen.storedBytes)}, ${formatNumber(chosen.ratio)}x) within ` +
        `${formatNumber(rec.cpuBudgetSecondsPerGiB)} compress CPU s/GiB${also}: it costs ${formatNumber(chosen.compressCpuSecondsPerGiB)} s/GiB`
      break
    }
    case 'target-ratio':
      why = `${rec.target} is the cheapest target reaching ${formatNumber(rec.targetRatio)}x: ${costs}`
      break
    case 'best-ratio-per-cpu': {
      why = `${rec.target} is the knee of the ratio-vs-CPU trade-off across ${rec.undominated} undominated target${rec.undominated === 1 ? '' : 's'}: ${costs}`
      const next = rec.nextStep
      if (next !== null)
        tail = `; the next step up, ${next.target}, reaches ${formatNumber(next.ratio)}x for ${formatNumber(next.compressCpuSecondsPerGiB)} s/GiB`
    }
  }
  const { replicationFactor, consumers } = carriers
  const across = `against none across ${replicationFactor} replica${replicationFactor === 1 ? '' : 's'} and ${consumers} consumer${consumers === 1 ? '' : 's'}`
  const saved =
    rec.bytesPerDaySaved !== null
      ? `, saving ${formatLargeBytes(rec.bytesPerDaySaved)} per day ${across}`
      : rec.bytesSavedPerGiB !== null
        ? `, saving ${formatLargeBytes(rec.bytesSavedPerGiB)} per GiB of input ${across} (ingest rate unknown)`
        : ''
  return `${why}${saved}${tail}.`
}

/** The recommendation as prose lines, without markup: what to run, why, and what it saves. */
export function recommendationLines(report: CompareReport): string[] {
  const rec: Recommendation | null = report.recommendation
  const rate = `ingest rate: ${ingestRateText(report.source.ingestRate)}`
  if (rec === null)
    return [
      'recommendation: none: no measured target meets the criteria (or every target was recompressed by the broker)',
      rate
    ]
  return [
    `recommendation: ${rec.target} (${rec.criterion})`,
    `  ${recommendationReason(rec, report.settings)}`,
    `  ${rate}`,
    ...savingLines(report, rec).map((l) => `  ${l}`)
  ]
}

/** The columns of the compact table, by their index in COMPARE_HEADERS. */
const COMPACT = {
  target: 0,
  stored: 5,
  ratio: 7,
  vsNone: 8,
  vsCurrent: 9,
  compress: 10,
  decompress: 12,
  verdict: 15
} as const
const COMPACT_HEADERS: Readonly<Record<keyof typeof COMPACT, string>> = {
  target: 'target',
  stored: 'stored',
  ratio: 'ratio',
  vsNone: 'vs none',
  vsCurrent: 'vs current',
  compress: 'compress',
  decompress: 'decompress',
  verdict: 'broker'
}
const COMPACT_UNITS =
  'stored: one replica; compress, decompress: CPU s/GiB uncompressed; broker: batches kept (--wide: all)'

/** The table in a terminal's width: ratio, stored bytes, CPU per GiB and the broker's verdict, units in a line above. */
function compactTable(report: CompareReport, layout: TerminalLayout): string {
  const keys = (Object.keys(COMPACT) as Array<keyof typeof COMPACT>).filter(
    (k) => k !== 'vsCurrent' || report.current !== null
  )
  const rows = compareRows(report).map((row) =>
    keys.map((k) => {
      const cell = row[COMPACT[k]] ?? ''
      if (k === 'target') return cell.replace(/^current \(as stored\)/, 'current')
      if (k === 'verdict') return cell === 'not checked (read-only)' ? 'read-only' : cell
      return cell
    })
  )
  const dropOrder = ['vsNone', 'stored', 'verdict', 'decompress']
    .map((k) => keys.indexOf(k as keyof typeof COMPACT))
    .filter((i) => i >= 0)
  return [
    COMPACT_UNITS,
    fitTable(
      keys.map((k) => COMPACT_HEADERS[k]),
      rows,
      layout,
      dropOrder
    )
  ].join('\n')
}

/**
 * The comparison for a terminal: one row per target, the savings, then the recommendation. Within `layout`'s
 * width unless it is wide (every column, as JSON and Markdown have them).
 */
export function renderCompareTable(report: CompareReport, layout: TerminalLayout = WIDE): string {
  const table = layout.wide ? renderTable(COMPARE_HEADERS, compareRows(report)) : compactTable(report, layout)
  const current = report.current === null ? [] : [currentSummary(report.current), '']
  const projection = projectionLines(report, layout)
  const savings = savingsTable(report, layout.wide)
  const savingsText = fitTable(savings.headers, savings.rows, layout, [4, 3])
  return wrapLines(
    [
      ...projection.before,
      table,
      '',
      savings.title,
      savingsText,
      '',
      ...current,
      ...recommendationLines(report),
      ...againstCurrentLines(report),
      ...projection.after
    ].join('\n'),
    layout
  )
}
