import type { AuditReport, AuditTopic, MonthlyMoney } from '../audit/audit-report.js'
import type { FormatRow } from '../compare/format-rows.js'
import { clientHint } from './audit-apply.js'
import { renderTable } from './table.js'
import { cutMiddle, PIPE, wrapLines, type TerminalLayout } from './terminal.js'

const GIB = 1024 ** 3

const STATUS_LABEL: Readonly<Record<Exclude<AuditTopic['status'], 'audited'>, string>> = {
  'too-little-data': 'too little data',
  empty: 'empty',
  'not-authorized': 'NO READ ACL',
  failed: 'FAILED',
  cut: 'CUT',
  'not-reached': 'skipped'
}

/**
 * The ranked table, each topic's notes, and the cluster's totals, within `layout.width`: topic names are cut in the
 * middle to fit and the other lines wrap. Wide, nothing is cut or wrapped.
 */
export function renderAuditTable(report: AuditReport, layout: TerminalLayout = PIPE): string {
  const priced = report.prices !== null
  const headers = [
    'topic',
    'current',
    'recommended',
    'stored',
    'GiB/day saved',
    ...(priced ? [`net/month ${report.prices?.currency ?? ''}`.trim()] : [])
  ]
  const rows = report.topics.map((t) => [
    t.topic,
    currentLabel(t),
    recommendedLabel(t),
    storedLabel(t),
    gibPerDay(t),
    ...(priced ? [t.status === 'audited' ? money(t.savings?.money?.net) : '-'] : [])
  ])
  const others = headers.slice(1).map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i + 1] ?? '').length)))
  const topicWidth = layout.wide
    ? Number.POSITIVE_INFINITY
    : Math.max(12, layout.width - others.reduce((a, b) => a + b + 2, 0))
  const table = renderTable(
    headers,
    rows.map(([topic, ...rest]) => [cutMiddle(topic ?? '', topicWidth), ...rest])
  )
  const text = (lines: readonly string[]): string => wrapLines(lines.join('\n'), layout)
  return [
    text([
      `audit of ${report.brokers.join(',')}: ${report.totals.topics} topics, ` +
        `${(report.settings.sampleBytes / 1024 ** 2).toFixed(0)} MiB sampled each${overrides(report)}`,
      'stored: bytes per record vs today; GiB/day: saved on disk (all replicas) + in fetches (all groups)'
    ]),
    table,
    text([...notes(report.topics), ...totalsLines(report)])
  ]
    .filter((part) => part !== '')
    .join('\n')
}

/** --replication-factor and --consumers, when they replace what each topic's facts say. */
export function overrides(report: AuditReport): string {
  const { replicationFactorOverride: replicas, consumersOverride: groups } = report.settings
  const counted = [
    ...(replicas === null ? [] : [`${replicas} replicas`]),
    ...(groups === null ? [] : [`${groups} groups`])
  ]
  return counted.length === 0 ? '' : `; counted per topic: ${counted.join(', ')}`
}

function currentLabel(t: AuditTopic): string {
  if (t.current === null)
    return t.facts?.compressionType !== null && t.brokerRecompresses ? `(${t.facts?.compressionType})` : '-'
  return t.current.codec
}

function recommendedLabel(t: AuditTopic): string {
  if (t.status !== 'audited' && t.status !== 'too-little-data') return STATUS_LABEL[t.status]
  if (t.status === 'too-little-data') return STATUS_LABEL['too-little-data']
  if (t.verdict === null) return '-'
  return t.verdict.action === 'keep' ? 'keep' : t.verdict.target
}

function storedLabel(t: AuditTopic): string {
  if ((t.status !== 'audited' && t.status !== 'too-little-data') || t.verdict?.action !== 'change') return '-'
  const share = t.targets.find((x) => x.target === (t.verdict as { target: string }).target)?.storedShare
  return share === undefined || !Number.isFinite(share)
    ? '-'
    : `${share >= 1 ? '+' : ''}${((share - 1) * 100).toFixed(0)}%`
}

function gibPerDay(t: AuditTopic): string {
  if (t.status !== 'audited' || t.savings === null) return '-'
  const bytes = (t.savings.diskBytesPerDay ?? 0) + (t.savings.fetchBytesPerDay ?? 0)
  return (bytes / GIB).toFixed(bytes / GIB >= 100 ? 0 : 2)
}

/** Storage and transfer saved, the CPU cost and the net, in words. */
export function monthly(m: MonthlyMoney): string {
  return (
    `storage saved ${money(m.storage)}, transfer saved ${money(m.transfer)}, ` +
    `CPU cost ${money(m.cpu)}, net ${money(m.net)}`
  )
}

export function money(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-'
  return Math.abs(value) >= 1000 ? value.toFixed(0) : value.toFixed(2)
}

/**
 * One line per remark: failures with their error or missing ACL, compaction, broker recompression, HTTP records'
 * format rows, unknown rates, and the clients that cannot set a topic's target.
 */
export function notes(topics: readonly AuditTopic[]): string[] {
  const out: string[] = []
  for (const t of topics) {
    if (t.error !== null) out.push(`  ${t.topic}: ${t.error}`)
    if (t.brokerRecompresses) {
      out.push(
        `  ${t.topic}: compression.type=${t.facts?.compressionType} (${t.facts?.compressionTypeSource}): ` +
          'the broker recompresses every batch; change it there, not in the producers'
      )
    }
    if (t.compacted) out.push(`  ${t.topic}: compacted: the figures apply to what compaction keeps`)
    if (t.formats !== undefined && t.formats.length > 0) out.push(formatNote(t.topic, t.formats))
    if (t.status === 'audited' && t.ingestRateNote !== null)
      out.push(`  ${t.topic}: no ingest rate (${t.ingestRateNote}): no bytes per day`)
    const hint = clientHint(t)
    if (hint !== null) out.push(hint)
  }
  return out.length === 0 ? [] : ['notes:', ...out]
}

const FORMAT_NAMES: Readonly<Record<FormatRow['format'], string>> = { text: 'as text lines', json: 'as JSON' }

/**
 * What the topic's HTTP records would store in the other forms, against the Cap'n Proto records' bytes. The codec
 * they were measured at comes last: first, beside a "keep" verdict, it read as the topic's own codec.
 */
function formatNote(topic: string, rows: readonly FormatRow[]): string {
  const forms = rows.map((r) => `${FORMAT_NAMES[r.format]} ${r.storedVsRecords.toFixed(2)}x`).join(', ')
  return `  ${topic}: ${forms} the Cap'n Proto records' bytes (at ${rows[0]?.target ?? '-'})`
}

function totalsLines(report: AuditReport): string[] {
  const t = report.totals
  const gib = (b: number): string => (b / GIB).toFixed(2)
  const lines = [
    `cluster: ${t.audited} of ${t.topics} topics audited, ${t.toChange} to change, ${t.failed} failed or not readable`,
    `saved: ${gib(t.diskBytesPerDay)} GiB/day on disk (all replicas), ` +
      `${gib(t.fetchBytesPerDay)} GiB/day fetched (all groups), ` +
      `${gib(t.steadyStateDiskBytes)} GiB on disk at retention`,
    `CPU the changes cost: ${(t.cpuSecondsPerDay / 3600).toFixed(2)} core-hours/day ` +
      "(compression + every group's decompression)"
  ]
  if (t.money !== null) {
    const c = report.prices?.currency ?? ''
    lines.push(`per month (${c}): ${monthly(t.money)}`)
  }
  const partial = partialText(report)
  if (partial !== null) lines.push(`PARTIAL: ${partial}`)
  return lines
}

/**
 * Why the report does not cover every topic asked for, in words: failures, and what ended the pass with how many
 * topics it cut while they were read or projected and how many it skipped; null when the report is whole.
 */
export function partialText(report: AuditReport): string | null {
  if (!report.partial) return null
  const t = report.totals
  const parts = t.failed > 0 ? [`${t.failed} failed or not readable (see notes)`] : []
  if (report.stoppedBy !== null) {
    const by = report.stoppedBy === 'max-duration' ? '--max-duration' : 'an interrupt'
    parts.push(`${by} ended the pass: ${t.cut} cut while read or projected, ${t.notReached} skipped (not started)`)
  }
  return parts.join('; ')
}
