import type { CompareReport } from '../compare/compare-report.js'
import { againstCurrentLines, currentSummary } from './compare-current.js'
import { COMPARE_HEADERS, compareRows, ingestRateText, recommendationReason, savingLines } from './compare-table.js'
import { savingsTable } from './savings-text.js'
import { projectionMarkdown } from './projection-markdown.js'
import { formatBytes } from './table.js'

/** The comparison as a Markdown document, for a ticket or a pull request: results, recommendation, source, settings. */
export function renderCompareMarkdown(report: CompareReport): string {
  const rows = compareRows(report)
  const numeric = COMPARE_HEADERS.map((_, i) => i > 0 && i < COMPARE_HEADERS.length - 1)
  const { source, settings } = report
  const rec = report.recommendation
  return [
    `# squeeze compare: ${escapeInline(source.topic)}`,
    '',
    `Generated ${escapeInline(report.generatedAt)} by squeeze ${escapeInline(report.squeezeVersion)}.`,
    '',
    ...projectionMarkdown(report, markdownRow, escapeInline),
    '## Results',
    '',
    markdownRow(COMPARE_HEADERS),
    markdownRow(numeric.map((right) => (right ? '---:' : ':---'))),
    ...rows.map(markdownRow),
    '',
    '## Recommendation',
    '',
    rec === null
      ? 'No measured target meets the criteria (or every target was recompressed by the broker).'
      : `**${escapeInline(rec.target)}** (${rec.criterion}): ${escapeInline(recommendationReason(rec, settings))}`,
    '',
    ...(rec === null ? [] : savingLines(report, rec).map((line) => `- ${escapeInline(line)}`)),
    '',
    ...savingsSection(report),
    ...(report.current === null
      ? []
      : [
          '## Against what is stored today',
          '',
          ...[currentSummary(report.current), ...againstCurrentLines(report)].map(
            (line) => `- ${escapeInline(line.trim())}`
          ),
          ''
        ]),
    '## Source',
    '',
    `- Kind: ${source.kind}`,
    `- Topic: \`${source.topic.replaceAll('`', "'")}\``,
    `- Description: ${escapeInline(source.description)}`,
    `- Records: ${source.records} in ${source.partitions} partition${source.partitions === 1 ? '' : 's'}`,
    `- Uncompressed: ${formatBytes(source.uncompressedBytes)}`,
    `- Ingest rate: ${escapeInline(ingestRateText(source.ingestRate))}`,
    '',
    '## Settings',
    '',
    `- linger.ms: ${settings.lingerMs}`,
    `- batch.size: ${settings.batchSizeBytes} bytes (${formatBytes(settings.batchSizeBytes)})`,
    `- Replication factor: ${settings.replicationFactor}`,
    `- Consumers: ${settings.consumers}`,
    ''
  ].join('\n')
}

function savingsSection(report: CompareReport): string[] {
  const { title, headers, rows } = savingsTable(report)
  return [
    '## Bytes saved',
    '',
    escapeInline(title.replace(/:$/, '.')),
    '',
    markdownRow(headers),
    markdownRow(headers.map((_, i) => (i === 0 ? ':---' : '---:'))),
    ...rows.map(markdownRow),
    ''
  ]
}

function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeCell).join(' | ')} |`
}

// A pipe would split the cell, a newline would end the table.
function escapeCell(text: string): string {
  return escapeInline(text).replaceAll('|', '\\|')
}

// Topic names and descriptions come from the operator's cluster: keep them from turning into markup.
function escapeInline(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`)
}
