import { afterDigits, afterFixed, afterLiteral, isRestOfLine } from './line-bytes.js'
import type { LogFormat } from './log-format.js'
import { regexLineFormat } from './regex-line-format.js'
import { RFC3164_TIME } from './syslog.js'

/**
 * time, process (dnsmasq or dnsmasq-dhcp), pid, then with `log-queries=extra` (Pi-hole's setting) the query id
 * and the client's address/port, then the message; dnsmasq logs without a hostname field.
 */
export const DNSMASQ_LINE =
  /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) (dnsmasq(?:-dhcp)?)\[(\d+)\]: (?:(\d+) ([\da-fA-F.:]+)\/(\d+) )?(.*)$/

const DNSMASQ = Buffer.from('dnsmasq')
const DHCP = Buffer.from('-dhcp')
const OPEN_PID = Buffer.from('[')
const CLOSE_PID = Buffer.from(']: ')

/**
 * DNSMASQ_LINE on a line's bytes. The query id and client are optional and the message after them is `.*`, so
 * whatever follows the pid's `]: ` matches if it is the rest of a line.
 */
export function acceptsDnsmasqLine(bytes: Buffer, start: number, end: number): boolean {
  let i = afterLiteral(bytes, afterFixed(bytes, start, end, RFC3164_TIME), end, DNSMASQ)
  if (i < 0) return false
  const dhcp = afterLiteral(bytes, i, end, DHCP)
  if (dhcp >= 0) i = dhcp
  i = afterLiteral(bytes, i, end, OPEN_PID)
  i = afterDigits(bytes, i, end)
  i = afterLiteral(bytes, i, end, CLOSE_PID)
  return i >= 0 && isRestOfLine(bytes, i, end)
}

export const dnsmasqFormat: LogFormat = regexLineFormat('dns-dnsmasq', DNSMASQ_LINE, 'dnsmasq log', acceptsDnsmasqLine)
