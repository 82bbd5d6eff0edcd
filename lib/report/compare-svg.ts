import type { CompareReport, CompareTargetResult } from '../compare/compare-report.js'
import { paretoFront } from '../compare/pareto.js'

const WIDTH = 760
const HEIGHT = 500
const PLOT = { left: 80, right: WIDTH - 40, top: 60, bottom: HEIGHT - 70 } as const
/** On a log axis, targets that spent no CPU (none) sit in a lane left of the axis break, at "0". */
const ZERO_LANE = 36

interface Axis {
  readonly map: (value: number) => number
  readonly ticks: ReadonlyArray<{ readonly value: number; readonly at: number; readonly label: string }>
  readonly log: boolean
}

/** A standalone SVG scatter chart: compress CPU per GiB against ratio, one labelled point per target, the Pareto front as a line. */
export function renderCompareSvg(report: CompareReport): string {
  const plotted = report.targets.filter(
    (t) => Number.isFinite(t.compressCpuSecondsPerGiB) && t.compressCpuSecondsPerGiB >= 0 && Number.isFinite(t.ratio)
  )
  const skipped = report.targets.filter((t) => !plotted.includes(t))
  const x = xAxis(plotted.map((t) => t.compressCpuSecondsPerGiB))
  const current = report.current?.row
  const currentRatio =
    current !== undefined && Number.isFinite(current.equivalentRatio) ? current.equivalentRatio : undefined
  const y = yAxis([...(currentRatio === undefined ? [] : [currentRatio]), ...plotted.map((t) => t.ratio)])
  const front = paretoFront(plotted)
  const recommended = report.recommendation?.target
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(`squeeze compare: ${report.source.topic}`)}</title>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="28" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(`Compression ratio vs compress CPU: ${report.source.topic}`)}</text>`,
    ...axisMarkup(x, y),
    ...(current === undefined || currentRatio === undefined
      ? []
      : currentMarkup(`${current.label}: ${current.codec}`, y.map(currentRatio))),
    `<polyline class="pareto" fill="none" stroke="#d62728" stroke-width="1.5" stroke-dasharray="5 3" points="${front.map((t) => `${fmt(x.map(t.compressCpuSecondsPerGiB))},${fmt(y.map(t.ratio))}`).join(' ')}"/>`,
    ...plotted.map((t) => pointMarkup(t, x, y, front.includes(t), t.target === recommended)),
    legendMarkup(skipped, currentRatio !== undefined),
    '</svg>'
  ]
  return `${parts.join('\n')}\n`
}

function pointMarkup(t: CompareTargetResult, x: Axis, y: Axis, onFront: boolean, recommended: boolean): string {
  const cx = x.map(t.compressCpuSecondsPerGiB)
  const cy = y.map(t.ratio)
  const fill = onFront ? '#d62728' : '#1f77b4'
  const ring = recommended ? ' stroke="#000000" stroke-width="2"' : ''
  // Labels sit to the right of their point unless that would run off the plot.
  const rightSide = cx < PLOT.right - 80
  return [
    `<circle class="target" cx="${fmt(cx)}" cy="${fmt(cy)}" r="5" fill="${fill}"${ring}/>`,
    `<text class="label" x="${fmt(rightSide ? cx + 8 : cx - 8)}" y="${fmt(cy - 6)}" text-anchor="${rightSide ? 'start' : 'end'}">${escapeXml(t.target)}</text>`
  ].join('\n')
}

/**
 * Today's stored bytes as a level across the plot: its producers paid the compress CPU, so it has no place on
 * the x axis; a target above the line stores less than the topic does now.
 */
function currentMarkup(label: string, at: number): string[] {
  return [
    `<line class="current" x1="${PLOT.left}" y1="${fmt(at)}" x2="${PLOT.right}" y2="${fmt(at)}" stroke="#2ca02c" stroke-width="1.5"/>`,
    `<text class="current-label" x="${PLOT.right}" y="${fmt(at - 5)}" text-anchor="end" fill="#2ca02c">${escapeXml(label)}</text>`
  ]
}

function axisMarkup(x: Axis, y: Axis): string[] {
  const out = [
    `<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="#000000"/>`,
    `<line x1="${PLOT.left}" y1="${PLOT.top}" x2="${PLOT.left}" y2="${PLOT.bottom}" stroke="#000000"/>`
  ]
  for (const tick of x.ticks) {
    out.push(
      `<line x1="${fmt(tick.at)}" y1="${PLOT.bottom}" x2="${fmt(tick.at)}" y2="${PLOT.bottom + 5}" stroke="#000000"/>`
    )
    out.push(`<text x="${fmt(tick.at)}" y="${PLOT.bottom + 19}" text-anchor="middle">${escapeXml(tick.label)}</text>`)
  }
  for (const tick of y.ticks) {
    out.push(
      `<line x1="${PLOT.left - 5}" y1="${fmt(tick.at)}" x2="${PLOT.right}" y2="${fmt(tick.at)}" stroke="#dddddd"/>`
    )
    out.push(`<text x="${PLOT.left - 8}" y="${fmt(tick.at + 4)}" text-anchor="end">${escapeXml(tick.label)}</text>`)
  }
  const xTitle = `compress CPU seconds per GiB${x.log ? ' (log scale)' : ''}`
  out.push(
    `<text x="${(PLOT.left + PLOT.right) / 2}" y="${HEIGHT - 30}" text-anchor="middle">${escapeXml(xTitle)}</text>`
  )
  out.push(
    `<text x="20" y="${(PLOT.top + PLOT.bottom) / 2}" text-anchor="middle" transform="rotate(-90 20 ${(PLOT.top + PLOT.bottom) / 2})">compression ratio (uncompressed / stored)</text>`
  )
  return out
}

function legendMarkup(skipped: readonly CompareTargetResult[], withCurrent: boolean): string {
  const note =
    skipped.length === 0 ? '' : `; not plotted (no finite figures): ${skipped.map((t) => t.target).join(', ')}`
  return `<text x="${PLOT.left}" y="${HEIGHT - 10}" fill="#555555">${escapeXml(`red: Pareto front (no other target is both cheaper and smaller); ringed: recommended${withCurrent ? '; green: what the topic stores today' : ''}${note}`)}</text>`
}

/** Log scale when the positive CPU figures span more than 10x, otherwise linear from 0. */
function xAxis(values: readonly number[]): Axis {
  const positive = values.filter((v) => v > 0)
  const minPositive = Math.min(...positive)
  const max = Math.max(0, ...values)
  if (positive.length >= 2 && max / minPositive > 10) {
    const lo = Math.floor(Math.log10(minPositive))
    const hi = Math.ceil(Math.log10(max))
    const hasZero = values.some((v) => v === 0)
    const start = PLOT.left + (hasZero ? ZERO_LANE : 0)
    const map = (v: number): number =>
      v <= 0 ? PLOT.left : start + ((Math.log10(v) - lo) / (hi - lo)) * (PLOT.right - start)
    const ticks: Array<Axis['ticks'][number]> = []
    if (hasZero) ticks.push({ value: 0, at: PLOT.left, label: '0' })
    for (let e = lo; e <= hi; e++) ticks.push({ value: 10 ** e, at: map(10 ** e), label: formatTick(10 ** e) })
    return { map, ticks, log: true }
  }
  return linearAxis(0, max > 0 ? max : 1, PLOT.left, PLOT.right)
}

function yAxis(values: readonly number[]): Axis {
  const lo = values.length === 0 ? 0 : Math.min(...values)
  const hi = values.length === 0 ? 1 : Math.max(...values)
  const axis =
    lo === hi ? linearAxis(lo - 0.5, hi + 0.5, PLOT.bottom, PLOT.top) : linearAxis(lo, hi, PLOT.bottom, PLOT.top)
  return { ...axis, ticks: axis.ticks.map((t) => ({ ...t, label: `${t.label}x` })) }
}

/** Axis over [lo, hi] widened to round tick steps (1, 2 or 5 times a power of ten), about five ticks. */
function linearAxis(lo: number, hi: number, from: number, to: number): Axis {
  const rough = (hi - lo) / 5
  const magnitude = 10 ** Math.floor(Math.log10(rough))
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= rough) ?? 10) * magnitude
  const start = Math.floor(lo / step) * step
  const end = Math.ceil(hi / step) * step
  const map = (v: number): number => from + ((v - start) / (end - start)) * (to - from)
  const ticks: Array<Axis['ticks'][number]> = []
  for (let i = 0; start + i * step <= end + step / 1e6; i++) {
    const value = start + i * step
    ticks.push({ value, at: map(value), label: formatTick(value) })
  }
  return { map, ticks, log: false }
}

function formatTick(value: number): string {
  return Number(value.toPrecision(6)).toString()
}

function fmt(n: number): string {
  return Number.isFinite(n) ? n.toFixed(1) : '0'
}

/** Escapes markup characters and drops control characters XML 1.0 cannot hold at all. */
export function escapeXml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c)
}
