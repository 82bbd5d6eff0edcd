import type { AuditReport, AuditTopic } from '../audit/audit-report.js'
import { rankValue } from '../audit/run-audit.js'
import { escapeXml } from './compare-svg.js'

const TOP = 20
const WIDTH = 900
const BAR_HEIGHT = 22
const LEFT = 300
const RIGHT = WIDTH - 120
const GIB = 1024 ** 3

/** A horizontal bar chart of the top 20 savings: net per month when priced, else GiB per day on disk and in fetches. */
export function renderAuditSvg(report: AuditReport): string {
  const top = report.topics.filter((t) => t.status === 'audited' && rankValue(t) > 0).slice(0, TOP)
  const priced = report.prices !== null
  const value = (t: AuditTopic): number => (priced ? rankValue(t) : rankValue(t) / GIB)
  const max = Math.max(...top.map(value), Number.MIN_VALUE)
  const height = 70 + Math.max(1, top.length) * BAR_HEIGHT + 30
  const unit = priced ? `${report.prices?.currency ?? ''} net per month` : 'GiB saved per day (disk + fetch)'
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ` +
      'font-family="sans-serif" font-size="12">',
    `<title>${escapeXml(`squeeze audit: top ${TOP} savings`)}</title>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="28" text-anchor="middle" font-size="16" font-weight="bold">` +
      `${escapeXml(`Top ${top.length} savings by topic: ${unit}`)}</text>`,
    ...top.flatMap((t, i) => {
      const y = 50 + i * BAR_HEIGHT
      const w = ((RIGHT - LEFT) * value(t)) / max
      const to = t.verdict?.action === 'change' ? t.verdict.target : 'keep'
      return [
        `<text x="${LEFT - 8}" y="${y + 15}" text-anchor="end">${escapeXml(
          `${t.topic} (${t.current?.codec ?? '-'} → ${to})`
        )}</text>`,
        `<rect class="saving" x="${LEFT}" y="${y + 3}" width="${w.toFixed(1)}" height="${BAR_HEIGHT - 6}" ` +
          'fill="#1f77b4"/>',
        `<text x="${(LEFT + w + 6).toFixed(1)}" y="${y + 15}">${escapeXml(value(t).toFixed(2))}</text>`
      ]
    }),
    ...(top.length === 0
      ? [`<text x="${WIDTH / 2}" y="70" text-anchor="middle">no topic saves anything by changing codec</text>`]
      : []),
    '</svg>'
  ]
  return `${parts.join('\n')}\n`
}
