import { ErrorCodes, SqueezeError } from '../errors.js'
import { DASH, DOT, HASH, isDigit, TAB } from './ascii-bytes.js'
import { lineAsValue, type LogFormat } from './log-format.js'

/**
 * Zeek dns.log in its default TSV form. `#` lines (separator, fields, types, open/close) describe
 * the file, they are not records, so encodeLine rejects them with reason "header" and callers
 * count them as skipped rather than as parse failures.
 */
export const ZEEK_DNS_FIELDS = [
  'ts',
  'uid',
  'id.orig_h',
  'id.orig_p',
  'id.resp_h',
  'id.resp_p',
  'proto',
  'trans_id',
  'rtt',
  'query',
  'qclass',
  'qclass_name',
  'qtype',
  'qtype_name',
  'rcode',
  'rcode_name',
  'AA',
  'TC',
  'RD',
  'RA',
  'Z',
  'answers',
  'TTLs',
  'rejected'
] as const

const COLUMNS = ZEEK_DNS_FIELDS.length
const ANSWERS = ZEEK_DNS_FIELDS.indexOf('answers')
const TTLS = ZEEK_DNS_FIELDS.indexOf('TTLs')
// Columns Zeek types as count/port/time/interval: decode converts them to numbers, as a consumer would.
const NUMERIC = new Set(
  ['ts', 'id.orig_p', 'id.resp_p', 'trans_id', 'rtt', 'qclass', 'qtype', 'rcode', 'Z'].map((f) =>
    ZEEK_DNS_FIELDS.indexOf(f as (typeof ZEEK_DNS_FIELDS)[number])
  )
)
const IS_NUMERIC: readonly boolean[] = ZEEK_DNS_FIELDS.map((_, i) => NUMERIC.has(i))

function numericOk(v: string): boolean {
  return v === '-' || !Number.isNaN(Number(v))
}

/**
 * Rejects here what decode() would reject, so a bad line is counted at the producer, not at every consumer. Walks
 * the tabs instead of splitting: only the numeric columns become strings (split's 24 strings and array per line
 * were most of a zeek run's parse).
 */
function checkZeekLine(line: string): void {
  if (line.startsWith('#')) throw new SqueezeError(ErrorCodes.PARSE_LINE, 'header')
  let column = 0
  let start = 0
  let notNumeric = -1
  for (;;) {
    const tab = line.indexOf('\t', start)
    if (
      notNumeric < 0 &&
      column < COLUMNS &&
      IS_NUMERIC[column] === true &&
      !numericOk(line.slice(start, tab < 0 ? line.length : tab))
    )
      notNumeric = column
    column++
    if (tab < 0) break
    start = tab + 1
  }
  if (column !== COLUMNS)
    throw new SqueezeError(ErrorCodes.PARSE_LINE, `expected ${COLUMNS} tab-separated columns, got ${column}`)
  if (notNumeric >= 0)
    throw new SqueezeError(ErrorCodes.PARSE_LINE, `column ${ZEEK_DNS_FIELDS[notNumeric]} is not numeric`)
}

/**
 * checkZeekLine on the line's bytes, without making its text: true for a line of COLUMNS columns whose numeric
 * columns are each `-` or digits with at most one dot (values Number() reads, as numericOk asks); false for
 * anything else, left to checkZeekLine. A tab byte is never part of a multi-byte UTF-8 sequence, so the columns are
 * those of the text. One pass over the bytes: a non-numeric column is only skipped to its tab.
 */
function acceptsZeekLine(bytes: Buffer, start: number, end: number): boolean {
  if (bytes[start] === HASH) return false
  let column = 0
  let i = start
  for (;;) {
    if (IS_NUMERIC[column] === true) {
      const from = i
      let digits = 0
      let dots = 0
      for (; i < end; i++) {
        const b = bytes[i] as number
        if (b === TAB) break
        if (isDigit(b)) digits++
        else if (b === DOT && dots === 0) dots++
        else if (b !== DASH || i !== from || (i + 1 < end && bytes[i + 1] !== TAB)) return false
        else digits++ // a lone `-`: Zeek's unset field
      }
      if (digits === 0) return false
    } else while (i < end && bytes[i] !== TAB) i++
    column++
    if (i >= end) return column === COLUMNS
    if (column === COLUMNS) return false
    i++
  }
}

export const zeekDnsFormat: LogFormat = {
  kind: 'dns-zeek',
  ...lineAsValue(checkZeekLine, acceptsZeekLine),
  decode(value: Uint8Array): number {
    const cols = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8').split('\t')
    if (cols.length !== COLUMNS)
      throw new SqueezeError(
        ErrorCodes.DECODE_RECORD,
        `zeek dns record has ${cols.length} columns, expected ${COLUMNS}`
      )
    for (const i of NUMERIC) {
      if (!numericOk(cols[i] as string))
        throw new SqueezeError(ErrorCodes.DECODE_RECORD, `zeek dns column ${ZEEK_DNS_FIELDS[i]} is not numeric`)
    }
    // Vector columns are comma-separated sets; split them so their elements are really read.
    const answers = cols[ANSWERS] as string
    const ttls = cols[TTLS] as string
    if (answers !== '-') answers.split(',')
    if (ttls !== '-') ttls.split(',')
    return COLUMNS
  }
}
