import type { AuditReport, AuditTopic } from '../audit/audit-report.js'
import { auditSettingsMarkdown } from './audit-apply.js'
import { money, monthly, notes, overrides, partialText } from './audit-table.js'

const GIB = 1024 ** 3

/** The audit as a Markdown page: every fact and figure per topic, the notes and the totals. */
export function renderAuditMarkdown(report: AuditReport): string {
  const priced = report.prices !== null
  const head = [
    'topic',
    'status',
    'partitions',
    'RF',
    'retention.ms',
    'retention.bytes',
    'cleanup.policy',
    'compression.type',
    'groups',
    'codec mix',
    'records/batch',
    'recommended',
    'ratio (95%)',
    'stored vs current',
    'disk GiB/day',
    'fetch GiB/day',
    'GiB at retention',
    'CPU s/day',
    ...(priced ? ['net/month'] : [])
  ]
  const rows = report.topics.map((t) => [
    t.topic,
    t.status,
    num(t.facts?.partitions),
    num(t.facts?.replicationFactor),
    num(t.facts?.retentionMs),
    num(t.facts?.retentionBytes),
    t.facts?.cleanupPolicy ?? '-',
    t.facts?.compressionType ?? '-',
    num(t.facts?.groups.length),
    t.current?.codecs.map((c) => `${c.codec} ${c.batches}`).join(', ') ?? '-',
    t.current === null ? '-' : t.current.meanRecordsPerBatch.toFixed(1),
    t.verdict === null ? '-' : t.verdict.action === 'keep' ? 'keep' : t.verdict.target,
    interval(t),
    stored(t),
    gib(t.savings?.diskBytesPerDay),
    gib(t.savings?.fetchBytesPerDay),
    gib(t.savings?.steadyStateDiskBytes),
    t.savings?.cpuSecondsPerDay === null || t.savings?.cpuSecondsPerDay === undefined
      ? '-'
      : t.savings.cpuSecondsPerDay.toFixed(1),
    ...(priced ? [money(t.savings?.money?.net)] : [])
  ])
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`
  const t = report.totals
  return [
    `# squeeze audit of ${report.brokers.join(',')}`,
    '',
    `${report.generatedAt}; squeeze ${report.squeezeVersion}; ` +
      `sample ${(report.settings.sampleBytes / 1024 ** 2).toFixed(0)} MiB per topic; ` +
      `targets ${report.settings.targets.join(', ')}; ` +
      `a change must store at most ${((1 - report.settings.margin) * 100).toFixed(0)}% of today's bytes` +
      `${overrides(report)}.`,
    '',
    line(head),
    line(head.map(() => '---')),
    ...rows.map(line),
    '',
    ...notes(report.topics)
      .slice(1)
      .map((n) => `- ${n.trim()}`),
    '',
    `**Cluster:** ${t.audited} of ${t.topics} topics audited, ${t.toChange} to change, ` +
      `${t.failed} failed or not readable. ` +
      `Saved ${gib(t.diskBytesPerDay)} GiB/day on disk, ${gib(t.fetchBytesPerDay)} GiB/day fetched, ` +
      `${gib(t.steadyStateDiskBytes)} GiB at retention; ` +
      `the changes cost ${(t.cpuSecondsPerDay / 3600).toFixed(2)} CPU core-hours/day.` +
      (t.money === null
        ? ''
        : ` Per month (${report.prices?.currency}): ${monthly(t.money)}` +
          `${
            report.prices?.source === null || report.prices?.source === undefined
              ? ''
              : ` (prices: ${report.prices.source})`
          }.`),
    ...(report.partial ? ['', `**Partial:** ${partialText(report) ?? ''}.`] : []),
    '',
    ...auditSettingsMarkdown(report)
  ].join('\n')
}

function num(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : String(value)
}

function gib(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? '-' : (bytes / GIB).toFixed(3)
}

function interval(t: AuditTopic): string {
  if (t.verdict?.action !== 'change') return '-'
  const target = t.targets.find((x) => x.target === (t.verdict as { target: string }).target)
  return target === undefined
    ? '-'
    : `${target.ratio.toFixed(2)} (${target.ratioLow.toFixed(2)}-${target.ratioHigh.toFixed(2)})`
}

function stored(t: AuditTopic): string {
  if (t.verdict?.action !== 'change') return '-'
  const share = t.targets.find((x) => x.target === (t.verdict as { target: string }).target)?.storedShare
  return share === undefined || !Number.isFinite(share) ? '-' : `${((share - 1) * 100).toFixed(1)}%`
}
