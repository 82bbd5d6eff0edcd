import { formatBytes } from '../units/bytes.js'

export { formatBytes }

/** A plain-text table for terminals: right-aligned numbers, left-aligned text, a rule under the header. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,]+[a-zA-Z%x/]*$|^-$/.test(r[i] ?? ''))
  )
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (numeric[i] === true ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

export function formatNumber(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-'
}

/** A ratio as `N.NNx`, or `-` where there is none to give (nothing read, nothing stored). */
export function formatRatio(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}x` : '-'
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
