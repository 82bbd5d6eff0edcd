import { DEFAULT_WIDTH, streamWidth } from '../terminal/width.js'
import { renderTable } from './table.js'

/** How wide a terminal report may be, and whether it shows every column (`--wide`). */
export interface TerminalLayout {
  readonly width: number
  readonly wide: boolean
}

/** Every column, no wrapping: `--wide`, and what the renderers do when no layout is given. */
export const WIDE: TerminalLayout = Object.freeze({ width: Number.POSITIVE_INFINITY, wide: true })

/** A pipe's layout with COLUMNS unset: what a report renders at when no terminal says otherwise. */
export const PIPE: TerminalLayout = Object.freeze({ width: DEFAULT_WIDTH, wide: false })

/** The layout for `stream`: its own width when it is a terminal, else DEFAULT_WIDTH; `wide` drops the limit. */
export function terminalLayout(
  stream: { readonly isTTY?: boolean; readonly columns?: number },
  wide: boolean
): TerminalLayout {
  if (wide) return WIDE
  return { width: streamWidth(stream), wide: false }
}

/** The first column is cut no shorter than this while `beforeCutting` still has columns to drop. */
const FIRST_COLUMN_MIN = 20

/**
 * A table within `layout.width`: columns are dropped from the end of `dropOrder` (indexes into headers) until it
 * fits; then, while the first column would be cut shorter than FIRST_COLUMN_MIN, those of `beforeCutting`; then
 * the first column's cells are cut in the middle (cutMiddle), as topic names differ at either end. Wide, it is every
 * column as given.
 */
export function fitTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  layout: TerminalLayout,
  dropOrder: readonly number[] = [],
  beforeCutting: readonly number[] = []
): string {
  if (layout.wide) return renderTable(headers, rows)
  let keep = headers.map((_, i) => i)
  const pick = (cells: readonly string[]): string[] => keep.map((i) => cells[i] ?? '')
  const render = (): string => renderTable(pick(headers), rows.map(pick))
  const first = Math.max(...[headers[0] ?? '', ...rows.map((r) => r[0] ?? '')].map((c) => c.length))
  let text = render()
  for (const drop of dropOrder) {
    if (widest(text) <= layout.width) return text
    keep = keep.filter((i) => i !== drop)
    text = render()
  }
  for (const drop of beforeCutting) {
    if (first - (widest(text) - layout.width) >= Math.min(first, FIRST_COLUMN_MIN)) break
    keep = keep.filter((i) => i !== drop)
    text = render()
  }
  const over = widest(text) - layout.width
  if (over <= 0) return text
  const limit = Math.max(4, first - over)
  const cut = (cells: readonly string[]): string[] => cells.map((c, i) => (i === 0 ? cutMiddle(c, limit) : c))
  return renderTable(
    cut(pick(headers)),
    rows.map((r) => cut(pick(r)))
  )
}

/**
 * `text` in at most `width` characters: its start and end with `~` between, the end the longer half. Topic names
 * share a prefix and differ at the end (a copier's destinations end in their codec) as often as the reverse.
 */
export function cutMiddle(text: string, width: number): string {
  if (text.length <= width) return text
  if (width <= 1) return text.slice(0, width)
  const tail = Math.ceil((width - 1) / 2)
  return `${text.slice(0, width - 1 - tail)}~${text.slice(text.length - tail)}`
}

function widest(text: string): number {
  return Math.max(0, ...text.split('\n').map((line) => line.length))
}

/**
 * Lines longer than the layout's width, wrapped at spaces; a continuation keeps the line's indent plus two. A word
 * longer than the width is cut. Wide, the text is unchanged.
 */
export function wrapLines(text: string, layout: TerminalLayout): string {
  if (layout.wide) return text
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, layout.width))
    .join('\n')
}

function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line]
  const indent = /^ */.exec(line)?.[0] ?? ''
  const next = `${indent}  `.slice(0, Math.max(0, width - 10))
  const out: string[] = []
  let current = indent
  for (const word of line.slice(indent.length).split(/ +/)) {
    const prefix = out.length === 0 && current === indent ? indent : next
    const candidate = current.trim() === '' ? `${prefix}${word}` : `${current} ${word}`
    if (candidate.length <= width) {
      current = candidate
      continue
    }
    if (current.trim() !== '') out.push(current)
    let rest = `${next}${word}`
    while (rest.length > width) {
      out.push(rest.slice(0, width))
      rest = `${next}${rest.slice(width)}`
    }
    current = rest
  }
  if (current.trim() !== '') out.push(current)
  return out
}
