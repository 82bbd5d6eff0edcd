import { ErrorCodes, SqueezeError } from '../errors.js'
import type { LogKind } from '../formats/log-format.js'
import { createDnsmasqGenerator } from './dnsmasq.js'
import { createHttpGenerator } from './http.js'
import { createJournaldGenerator } from './journald.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { createNginxErrorGenerator } from './nginx-error.js'
import { createSyslogGenerator } from './syslog.js'
import { createZeekDnsGenerator } from './zeek-dns.js'

export type { GeneratedRecord, GeneratorOptions, LogGenerator } from './log-generator.js'

const FACTORIES: Readonly<Record<LogKind, (opts: GeneratorOptions) => LogGenerator>> = {
  http: createHttpGenerator,
  journald: createJournaldGenerator,
  'nginx-error': createNginxErrorGenerator,
  'dns-dnsmasq': createDnsmasqGenerator,
  'dns-zeek': createZeekDnsGenerator,
  syslog: createSyslogGenerator
}

/**
 * Seeded, deterministic record source for one log kind: the same seed (and start time) always
 * yields the same byte sequence. Values are in the same wire format formatFor(kind) decodes.
 */
export function createGenerator(kind: LogKind, opts: GeneratorOptions): LogGenerator {
  const factory = Object.hasOwn(FACTORIES, kind) ? FACTORIES[kind] : undefined
  if (factory === undefined)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `no generator for log kind "${String(kind)}"`)
  if (!Number.isFinite(opts.seed))
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'generator seed must be a finite number')
  return factory(opts)
}
