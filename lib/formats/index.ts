import { ErrorCodes, SqueezeError } from '../errors.js'
import { dnsmasqFormat } from './dnsmasq.js'
import { httpFormat } from './http.js'
import { journaldFormat } from './journald.js'
import { nginxErrorFormat } from './nginx-error.js'
import { syslogFormat } from './syslog.js'
import { zeekDnsFormat } from './zeek-dns.js'
import type { LogFormat, LogKind } from './log-format.js'

export type { LogFormat, LogKind } from './log-format.js'
export type { HttpRequestFields, HttpMethod, Scheme, CacheStatus, TlsVersion } from './http-request.js'
export { writeHttpRequest } from './http-request-writer.js'
export { checkHttpRequest, readHttpRequest } from './http-request-reader.js'
export { parseCombinedLine } from './combined-log.js'

const FORMATS: Readonly<Record<LogKind, LogFormat>> = {
  http: httpFormat,
  journald: journaldFormat,
  'nginx-error': nginxErrorFormat,
  'dns-dnsmasq': dnsmasqFormat,
  'dns-zeek': zeekDnsFormat,
  syslog: syslogFormat
}

export const LOG_KINDS: readonly LogKind[] = Object.freeze(Object.keys(FORMATS) as LogKind[])

export function formatFor(kind: LogKind): LogFormat {
  // Kinds arrive from config files and CLI flags, so guard even though the type says it is valid.
  const format = Object.hasOwn(FORMATS, kind) ? FORMATS[kind] : undefined
  if (format === undefined) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `unknown log kind "${String(kind)}"`)
  return format
}
