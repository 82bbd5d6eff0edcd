import type { CompareReport } from '../compare/compare-report.js'
import { projectionLines, SWEEP_HEADERS, sweepFindings, sweepRows } from './projection-text.js'

/** A projection report's own Markdown section (empty for copy mode): how it was made, the what-if table. */
export function projectionMarkdown(
  report: CompareReport,
  row: (cells: readonly string[]) => string,
  escape: (text: string) => string
): string[] {
  const { before } = projectionLines(report)
  if (before.length === 0) return []
  const sweep = report.projection?.sweep ?? null
  return [
    '## Read-only projection',
    '',
    ...before.map((l) => `- ${escape(l)}`),
    '',
    ...(sweep === null
      ? []
      : [
          '### Batching what-if',
          '',
          row(SWEEP_HEADERS),
          row(SWEEP_HEADERS.map((_, i) => (i === 0 ? ':---' : '---:'))),
          ...sweepRows(sweep).map(row),
          '',
          ...sweepFindings(sweep).map((l) => `- ${escape(l)}`),
          ''
        ])
  ]
}
