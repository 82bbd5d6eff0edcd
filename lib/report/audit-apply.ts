import type { AuditReport, AuditTopic } from '../audit/audit-report.js'
import { renderApplyMarkdown, renderApplyText } from './compare-apply.js'
import { PIPE, type TerminalLayout } from './terminal.js'

/**
 * The table's hint for a changed topic: the named clients that cannot set its target, each with the target it
 * gets instead and what that stores against the verdict's. Null when every named client can set it.
 */
export function clientHint(t: AuditTopic): string | null {
  const limited = t.applyAs?.clients.filter((c) => c.limited) ?? []
  if (limited.length === 0) return null
  const overall = limited[0]?.overall ?? '?'
  const each = limited.map((c) =>
    c.target === null
      ? `${c.client} (none it can set)`
      : `${c.client} (${c.target}${c.storedShareOfOverall === null ? '' : `, ${c.storedShareOfOverall.toFixed(2)}x`})`
  )
  return `  ${t.topic}: ${overall} is beyond ${each.join(', ')}`
}

/**
 * After the table: with `show`, each client's settings for the top `top` changed topics in rank order; without
 * it, one line saying where the settings are. Empty when no topic has settings.
 */
export function renderAuditSettings(
  report: AuditReport,
  show: boolean,
  top: number,
  layout: TerminalLayout = PIPE
): string {
  const withSettings = report.topics.filter((t) => t.applyAs !== null)
  if (withSettings.length === 0) return ''
  if (!show) {
    return `settings per client: --json, --markdown; --show-settings prints ${top} of ${withSettings.length} topics\n`
  }
  return withSettings
    .slice(0, top)
    .map(
      (t) =>
        `\n${t.topic}: change to ${t.verdict?.action === 'change' ? t.verdict.target : '?'}\n` +
        renderApplyText(t.applyAs as NonNullable<AuditTopic['applyAs']>, true, layout)
    )
    .join('')
}

/** Every changed topic's settings per client, as Markdown sections. */
export function auditSettingsMarkdown(report: AuditReport): string[] {
  return report.topics.flatMap((t) =>
    t.applyAs === null ? [] : [renderApplyMarkdown(t.applyAs, `## ${t.topic}: settings per client`)]
  )
}
