import { CLOSE_BRACKET, COLON, OPEN_BRACKET, SPACE } from './ascii-bytes.js'
import { afterDigits, afterFixed, isRestOfLine, isVisibleAscii } from './line-bytes.js'
import type { LogFormat } from './log-format.js'
import { regexLineFormat } from './regex-line-format.js'

/**
 * Loose RFC 3164: time, host, tag (may carry a parenthesised suffix), optional pid, message.
 * Loose because real rsyslog output has tags without a colon and lines with an empty hostname.
 */
export const SYSLOG_LINE =
  /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) (\S+) ([^\s:[]+(?:\([^)]*\))?)(?:\[(\d+)\])?:? (.*)$/

/** RFC 3164's time and the space after it, as afterFixed reads it; dnsmasq lines start with it too. */
export const RFC3164_TIME = 'Ull _d dd:dd:dd '

/**
 * SYSLOG_LINE on a line's bytes, for its plain form: an ASCII host and tag, the tag up to a space, a colon or a
 * `[pid]`. The regex's greedy reading of such a line is this one, so each line taken here matches; a tag with a
 * parenthesised part holding spaces, an empty host or non-ASCII in either is left to the regex.
 */
export function acceptsSyslogLine(bytes: Buffer, start: number, end: number): boolean {
  let i = afterFixed(bytes, start, end, RFC3164_TIME)
  if (i < 0) return false
  const host = i
  while (i < end && isVisibleAscii(bytes[i] as number)) i++
  if (i === host || i >= end || bytes[i] !== SPACE) return false
  const tag = ++i
  for (; i < end; i++) {
    const b = bytes[i] as number
    if (!isVisibleAscii(b) || b === COLON || b === OPEN_BRACKET) break
  }
  if (i === tag || i >= end) return false
  if (bytes[i] === OPEN_BRACKET) {
    i = afterDigits(bytes, i + 1, end)
    if (i < 0 || i >= end || bytes[i] !== CLOSE_BRACKET) return false
    i++
  }
  if (i < end && bytes[i] === COLON) i++
  if (i >= end || bytes[i] !== SPACE) return false
  return isRestOfLine(bytes, i + 1, end)
}

export const syslogFormat: LogFormat = regexLineFormat('syslog', SYSLOG_LINE, 'RFC 3164 syslog', acceptsSyslogLine)
