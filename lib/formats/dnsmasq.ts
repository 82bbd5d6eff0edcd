import { regexLineFormat } from './regex-line-format.js'
import type { LogFormat } from './log-format.js'

/** time, process (dnsmasq or dnsmasq-dhcp), pid, message; dnsmasq logs without a hostname field. */
export const DNSMASQ_LINE = /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) (dnsmasq(?:-dhcp)?)\[(\d+)\]: (.*)$/

export const dnsmasqFormat: LogFormat = regexLineFormat('dns-dnsmasq', DNSMASQ_LINE, 'dnsmasq log')
