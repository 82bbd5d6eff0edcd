import type { BatchingSweep } from '../compare/projection/projection-details.js'
import { escapeXml } from './compare-svg.js'
import { formatBytes, formatNumber } from './table.js'

const CELL = { width: 110, height: 54 } as const
const MARGIN = { left: 90, top: 70, right: 20, bottom: 40 } as const

/**
 * The batching what-if as an SVG heatmap for one target: linger.ms down, batch.size across, each cell shaded by
 * its ratio (pale = lowest in the grid, dark = highest) and labelled with the ratio, records per batch and the
 * linger actually used.
 */
export function renderBatchingHeatmapSvg(sweep: BatchingSweep, target: string, title: string): string {
  const cells = sweep.cells.filter((c) => c.target === target)
  const ratios = cells.map((c) => c.ratio)
  const lo = Math.min(...ratios)
  const hi = Math.max(...ratios)
  const width = MARGIN.left + CELL.width * sweep.batchSizeBytes.length + MARGIN.right
  const height = MARGIN.top + CELL.height * sweep.lingerMs.length + MARGIN.bottom
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<title>${escapeXml(`${title}: ${target}`)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(`Ratio by linger.ms and batch.size: ${target}`)}</text>`,
    `<text x="${MARGIN.left + (CELL.width * sweep.batchSizeBytes.length) / 2}" y="${MARGIN.top - 22}" text-anchor="middle">batch.size</text>`,
    `<text x="14" y="${MARGIN.top + (CELL.height * sweep.lingerMs.length) / 2}" transform="rotate(-90 14 ${MARGIN.top + (CELL.height * sweep.lingerMs.length) / 2})" text-anchor="middle">linger.ms</text>`
  ]
  sweep.batchSizeBytes.forEach((size, col) =>
    parts.push(
      `<text x="${MARGIN.left + col * CELL.width + CELL.width / 2}" y="${MARGIN.top - 6}" text-anchor="middle">${escapeXml(formatBytes(size))}</text>`
    )
  )
  sweep.lingerMs.forEach((linger, row) => {
    const y = MARGIN.top + row * CELL.height
    parts.push(`<text x="${MARGIN.left - 8}" y="${y + CELL.height / 2 + 4}" text-anchor="end">${linger}</text>`)
    sweep.batchSizeBytes.forEach((size, col) => {
      const cell = cells.find((c) => c.lingerMs === linger && c.batchSizeBytes === size)
      if (cell === undefined) return
      const share = hi > lo ? (cell.ratio - lo) / (hi - lo) : 1
      const x = MARGIN.left + col * CELL.width
      const ink = share > 0.55 ? '#ffffff' : '#000000'
      parts.push(
        `<rect class="cell" x="${x}" y="${y}" width="${CELL.width}" height="${CELL.height}" fill="${shade(share)}" stroke="#ffffff"><title>${escapeXml(`linger.ms ${linger}, batch.size ${formatBytes(size)}: ${formatNumber(cell.ratio)}x`)}</title></rect>`,
        `<text x="${x + CELL.width / 2}" y="${y + 20}" text-anchor="middle" font-weight="bold" fill="${ink}">${formatNumber(cell.ratio)}x</text>`,
        `<text x="${x + CELL.width / 2}" y="${y + 35}" text-anchor="middle" fill="${ink}">${formatNumber(cell.meanRecordsPerBatch, 1)} rec/batch</text>`,
        `<text x="${x + CELL.width / 2}" y="${y + 48}" text-anchor="middle" fill="${ink}">${formatNumber(cell.meanLingerUsedMs, 0)} ms used</text>`
      )
    })
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}

/** Pale to dark blue: the share of the grid's ratio range a cell reaches. */
function shade(share: number): string {
  const mix = (from: number, to: number): number => Math.round(from + (to - from) * Math.min(1, Math.max(0, share)))
  return `rgb(${mix(239, 8)},${mix(243, 48)},${mix(255, 107)})`
}
