import { regexLineFormat } from './regex-line-format.js'
import type { LogFormat } from './log-format.js'

/**
 * Loose RFC 3164: time, host, tag (may carry a parenthesised suffix), optional pid, message.
 * Loose because real rsyslog output has tags without a colon and lines with an empty hostname.
 */
export const SYSLOG_LINE =
  /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) (\S+) ([^\s:[]+(?:\([^)]*\))?)(?:\[(\d+)\])?:? (.*)$/

export const syslogFormat: LogFormat = regexLineFormat('syslog', SYSLOG_LINE, 'RFC 3164 syslog')
