import { writeFileSync } from 'node:fs'
import type { ApplyAs } from '../apply/apply-as.js'
import type { CompareReport } from '../compare/compare-report.js'
import type { CompareOutcome } from '../compare/run-compare.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { renderBatchingHeatmapSvg } from './batching-heatmap-svg.js'
import { renderApplyMarkdown, renderApplyText } from './compare-apply.js'
import { renderCompareJson } from './compare-json.js'
import { renderCompareMarkdown } from './compare-markdown.js'
import { renderCompareSvg } from './compare-svg.js'
import { renderCompareTable } from './compare-table.js'
import { terminalLayout } from './terminal.js'

/** The files and the printed form asked for on the command line. */
export interface CompareOutputOptions {
  readonly json?: string | undefined
  readonly markdown?: string | undefined
  readonly chart?: string | undefined
  readonly showSettings: boolean
  readonly wide: boolean
}

export interface CompareOutputStreams {
  readonly stdout: { readonly isTTY?: boolean; readonly columns?: number; write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
}

/** Prints the table, writes the files asked for; exit 1 when the destinations did not get identical traffic. */
export function writeCompareReports(
  outcome: CompareOutcome,
  apply: ApplyAs,
  added: readonly string[],
  options: CompareOutputOptions,
  { stdout, stderr }: CompareOutputStreams
): number {
  // A run stopped early (Ctrl-C, --duration-s) still reports what it has, marked partial: the stop was the user's.
  if (!outcome.partial && outcome.report.targets.every((t) => t.records === 0)) {
    throw new SqueezeError(
      ErrorCodes.SOURCE,
      `read no record from ${outcome.report.source.description}: nothing to compare, no recommendation`
    )
  }
  if (outcome.partial)
    stdout.write('PARTIAL: the copy was stopped before the end of the source (Ctrl-C or --duration-s)\n')
  const layout = terminalLayout(stdout, options.wide)
  stdout.write(`${renderCompareTable(outcome.report, layout)}\n`)
  if (added.length > 0) {
    stdout.write(`added for --client: ${added.join(', ')} (the nearest level a named client can set)\n`)
  }
  stdout.write(renderApplyText(apply, options.showSettings, layout))
  writeFiles(outcome.report, apply, options, stdout)
  const counts = new Set(outcome.report.targets.map((t) => t.records))
  const digests = new Set(outcome.report.targets.map((t) => t.digest))
  if (counts.size > 1 || digests.size > 1) {
    stderr.write('squeeze: destinations differ in records; the comparison is not on identical traffic\n')
    return 1
  }
  return 0
}

function writeFiles(
  report: CompareReport,
  apply: ApplyAs,
  options: CompareOutputOptions,
  stdout: { write(text: string): unknown }
): void {
  if (options.json !== undefined) writeFileSync(options.json, renderCompareJson(report, apply))
  if (options.markdown !== undefined) {
    writeFileSync(options.markdown, `${renderCompareMarkdown(report)}\n${renderApplyMarkdown(apply)}`)
  }
  if (options.chart !== undefined) {
    writeFileSync(options.chart, renderCompareSvg(report))
    stdout.write(`chart: ${options.chart}\n`)
    const heatmap = writeBatchingHeatmap(report, options.chart)
    if (heatmap !== undefined) stdout.write(`batching heatmap: ${heatmap}\n`)
  }
}

/** Beside the chart, FILE.batching.svg: the what-if heatmap for the recommended target (else the first). */
function writeBatchingHeatmap(report: CompareReport, chart: string): string | undefined {
  const sweep = report.projection?.sweep
  const target = report.recommendation?.target ?? report.targets[0]?.target
  if (sweep === undefined || sweep === null || target === undefined) return undefined
  const path = chart.replace(/(\.svg)?$/i, '.batching.svg')
  writeFileSync(path, renderBatchingHeatmapSvg(sweep, target, `squeeze compare: ${report.source.topic}`))
  return path
}
