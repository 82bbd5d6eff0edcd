import { regexLineFormat } from './regex-line-format.js'
import type { LogFormat } from './log-format.js'

/**
 * time, process (dnsmasq or dnsmasq-dhcp), pid, then with `log-queries=extra` (Pi-hole's setting) the query id
 * and the client's address/port, then the message; dnsmasq logs without a hostname field.
 */
export const DNSMASQ_LINE =
  /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) (dnsmasq(?:-dhcp)?)\[(\d+)\]: (?:(\d+) ([\da-fA-F.:]+)\/(\d+) )?(.*)$/

export const dnsmasqFormat: LogFormat = regexLineFormat('dns-dnsmasq', DNSMASQ_LINE, 'dnsmasq log')
