import { CR, isDigit, LF } from './ascii-bytes.js'

/**
 * Pieces of the byte passes the text formats run before their regex: each reads a line's bytes in place and
 * answers only for the plain form of a line (ASCII where the regex reads classes), leaving anything else to the
 * regex on the line's text. A position that does not fit is -1, and each piece given -1 returns -1, so they chain.
 */

/** The first two bytes of U+2028 and U+2029 in UTF-8 (E2 80 A8, E2 80 A9): line terminators to a regex's `.`. */
const E2 = 0xe2
const X80 = 0x80
const XA8 = 0xa8
const XA9 = 0xa9

const D = 0x64 // 'd'
const U = 0x55 // 'U'
const L = 0x6c // 'l'
const UNDERSCORE = 0x5f

/**
 * The position after a fixed-width run read at `i`, or -1 where a byte does not fit it. The run is given as a
 * template: `d` a digit, `U` an upper-case letter, `l` a lower-case one, `_` a space or a digit, any other
 * character itself (ASCII).
 */
export function afterFixed(bytes: Buffer, i: number, end: number, template: string): number {
  if (i < 0 || i + template.length > end) return -1
  for (let k = 0; k < template.length; k++) {
    const b = bytes[i + k] as number
    const t = template.charCodeAt(k)
    const fits =
      t === D
        ? isDigit(b)
        : t === U
          ? b >= 0x41 && b <= 0x5a
          : t === L
            ? b >= 0x61 && b <= 0x7a
            : t === UNDERSCORE
              ? b === 0x20 || isDigit(b)
              : b === t
    if (!fits) return -1
  }
  return i + template.length
}

/** The position after `text` (ASCII) read at `i`, or -1. */
export function afterLiteral(bytes: Buffer, i: number, end: number, text: Uint8Array): number {
  if (i < 0 || i + text.length > end) return -1
  for (let k = 0; k < text.length; k++) if (bytes[i + k] !== text[k]) return -1
  return i + text.length
}

/** The position after one or more digits read at `i` (a regex's `\d+`), or -1. */
export function afterDigits(bytes: Buffer, i: number, end: number): number {
  if (i < 0) return -1
  const from = i
  while (i < end && isDigit(bytes[i] as number)) i++
  return i === from ? -1 : i
}

/** A printable ASCII byte other than space: what `\S` matches among single-byte characters, less the controls. */
export function isVisibleAscii(b: number): boolean {
  return b > 0x20 && b < 0x7f
}

/** Below this many bytes a loop in JS reads a line's rest faster than the native searches (a view and three calls). */
const SEARCH_FROM_BYTES = 48

/**
 * Whether `bytes[i, end)` is what a regex's `.*$` takes of the line's text: no line terminator (CR, LF, U+2028,
 * U+2029). Bytes that are not valid UTF-8 decode to U+FFFD, which `.` takes too.
 */
export function isRestOfLine(bytes: Buffer, i: number, end: number): boolean {
  if (end - i >= SEARCH_FROM_BYTES) return hasNoTerminator(bytes.subarray(i, end))
  for (; i < end; i++) {
    const b = bytes[i] as number
    if (b === LF || b === CR) return false
    if (b === E2 && isSeparatorAt(bytes, i, end)) return false
  }
  return true
}

/** isRestOfLine of a whole view, by native searches: a long message is mostly bytes none of them stop at. */
function hasNoTerminator(rest: Buffer): boolean {
  if (rest.indexOf(LF) >= 0 || rest.indexOf(CR) >= 0) return false
  for (let e = rest.indexOf(E2); e >= 0; e = rest.indexOf(E2, e + 1))
    if (isSeparatorAt(rest, e, rest.length)) return false
  return true
}

/** Whether U+2028 or U+2029 starts at `i` (its E2 byte). */
function isSeparatorAt(bytes: Buffer, i: number, end: number): boolean {
  return i + 2 < end && bytes[i + 1] === X80 && (bytes[i + 2] === XA8 || bytes[i + 2] === XA9)
}
