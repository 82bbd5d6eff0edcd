/**
 * A command's help, laid out for the terminal it is printed on. The help is written as entries (a term indented
 * two spaces, two or more spaces, a description, and continuation lines indented to the description's column),
 * paragraphs (unindented lines, the last not ending in a colon) and other lines. Each entry's description and each
 * paragraph is joined and wrapped again at `width`, an entry's at its own column; any other line longer than
 * `width` wraps with a hanging indent. Words are never dropped or reordered: only where lines break changes.
 */

import { streamWidth } from './width.js'

/** The narrowest and widest help: below the first the columns do not fit, past the second lines read poorly. */
const HELP_MIN_WIDTH = 60
const HELP_MAX_WIDTH = 120

interface Entry {
  readonly kind: 'entry'
  /** The term and the gap after it: the description starts at this text's length. */
  readonly term: string
  readonly words: string[]
  /** A term too long for the column: its description starts on the next line, indented to `column`. */
  readonly below?: { readonly column: number }
}

interface Paragraph {
  readonly kind: 'paragraph'
  readonly words: string[]
}

interface Plain {
  readonly kind: 'plain'
  readonly line: string
}

/** A term indented two spaces, two or more spaces, then the description. */
const ENTRY = /^( {2}\S(?:.*?\S)?)( {2,})(\S.*)$/

/** A term indented two spaces with no description beside it (it is too long): the description follows below. */
const TERM_ALONE = /^ {2}-\S/

/** An unindented line that opens a paragraph: prose, not a heading ("Usage:", "Input and budget:"). */
function opensParagraph(line: string): boolean {
  return /^\S/.test(line) && !line.startsWith('Usage:') && !line.trimEnd().endsWith(':')
}

export function fitHelp(text: string, width: number): string {
  const limit = Math.max(HELP_MIN_WIDTH, Math.min(HELP_MAX_WIDTH, Math.floor(width)))
  return blocksOf(text)
    .flatMap((block) => {
      if (block.kind === 'entry') return entryLines(block, limit)
      if (block.kind === 'paragraph') return fill(block.words, '', '', limit)
      return plainLines(block.line, limit)
    })
    .join('\n')
}

function blocksOf(text: string): Array<Entry | Paragraph | Plain> {
  const blocks: Array<Entry | Paragraph | Plain> = []
  for (const line of text.split('\n')) {
    const last = blocks[blocks.length - 1]
    const lead = line.length - line.trimStart().length
    if (last?.kind === 'entry' && line.trim() !== '' && lead === (last.below?.column ?? last.term.length)) {
      last.words.push(...words(line))
      continue
    }
    if (last?.kind === 'plain' && TERM_ALONE.test(last.line) && line.trim() !== '' && lead > 2) {
      blocks[blocks.length - 1] = { kind: 'entry', term: last.line, words: words(line), below: { column: lead } }
      continue
    }
    if (opensParagraph(line)) {
      if (last?.kind === 'paragraph') last.words.push(...words(line))
      else blocks.push({ kind: 'paragraph', words: words(line) })
      continue
    }
    const entry = ENTRY.exec(line)
    if (entry !== null) blocks.push({ kind: 'entry', term: `${entry[1]}${entry[2]}`, words: words(entry[3] ?? '') })
    else blocks.push({ kind: 'plain', line: line.trimEnd() })
  }
  return blocks
}

function words(text: string): string[] {
  return text.trim().split(/ +/)
}

/**
 * The description at the term's column; when that column leaves too little room (a long term, a narrow
 * terminal), the term stands alone and the description follows on lines of its own, indented a little more.
 */
function entryLines(entry: Entry, width: number): string[] {
  if (entry.below !== undefined) {
    const indent = ' '.repeat(entry.below.column)
    return [...plainLines(entry.term, width), ...fill(entry.words, indent, indent, width)]
  }
  const column = entry.term.length
  if (width - column >= 30) return fill(entry.words, entry.term, ' '.repeat(column), width)
  const indent = ' '.repeat(entry.term.length - entry.term.trimStart().length + 4)
  return [entry.term.trimEnd(), ...fill(entry.words, indent, indent, width)]
}

function plainLines(line: string, width: number): string[] {
  if (line.length <= width) return [line]
  const lead = ' '.repeat(line.length - line.trimStart().length)
  return fill(words(line), lead, `${lead}  `, width)
}

/** Words on lines of at most `width` (a word longer than a line has one to itself), the first after `first`. */
function fill(all: readonly string[], first: string, rest: string, width: number): string[] {
  const lines: string[] = []
  let line = first
  let empty = true
  for (const word of all) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line)
      line = rest
      empty = true
    }
    line = empty ? `${line}${word}` : `${line} ${word}`
    empty = false
  }
  lines.push(line)
  return lines
}

/** `help` laid out for `stream` (stdout): its own width when it is a terminal, else the reports' default width. */
export function helpFor(stream: { readonly isTTY?: boolean; readonly columns?: number }, help: string): string {
  return fitHelp(help, streamWidth(stream))
}
