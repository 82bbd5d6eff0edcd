import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import { DEFAULT_CONNECTION, type KafkaConnectionConfig } from '../kafka/connection.js'
import { splitBrokerAddress } from '../kafka/seed-brokers.js'
import type { Logger } from '../log/logger.js'
import { helpFor } from '../terminal/help-layout.js'
import { securityFrom, tlsWarnings, type SecurityFlags } from './security.js'

export type CliOptions = NonNullable<ParseArgsConfig['options']>

/** Flags every command that talks to a cluster shares: where the cluster is, security, logging. */
export const CONNECTION_OPTIONS = {
  brokers: { type: 'string' },
  'client-id': { type: 'string' },
  'log-level': { type: 'string' },
  'security-protocol': { type: 'string' },
  'sasl-mechanism': { type: 'string' },
  'sasl-username': { type: 'string' },
  'sasl-password-file': { type: 'string' },
  'ssl-ca-file': { type: 'string' },
  'ssl-cert-file': { type: 'string' },
  'ssl-key-file': { type: 'string' },
  'ssl-endpoint-identification': { type: 'string' },
  'ssl-reject-unauthorized': { type: 'string' },
  'client-config': { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const satisfies CliOptions

/**
 * Flags of the long-running services (produce, copy, consume) on top of the connection's: the metrics/health
 * listener and waiting for the cluster. One-shot commands (compare, audit, bench) refuse them rather than
 * accept a port they would never serve.
 */
export const COMMON_OPTIONS = {
  ...CONNECTION_OPTIONS,
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  'wait-for-brokers-s': { type: 'string' }
} as const satisfies CliOptions

const SERVICE_HELP = `  --metrics-port PORT         serve /metrics, /healthz, /readyz on this port (off by default)
  --metrics-host HOST         address the metrics listener binds (default 127.0.0.1)
  --wait-for-brokers-s S      keep retrying (readyz 503) for up to S seconds while Kafka or the topics are not
                              there yet, instead of failing at once (default 0; services in containers: set it)`

const SECURITY_AND_LOG_HELP = `  --log-level LEVEL           trace|debug|info|warn|error|silent (default info); logs are JSON on stderr
Security (flag, else environment, else --client-config):
  --security-protocol P       PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL (env KAFKA_SECURITY_PROTOCOL; default PLAINTEXT)
  --sasl-mechanism M          PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 (env KAFKA_SASL_MECHANISM)
  --sasl-username NAME        (env KAFKA_SASL_USERNAME)
  --sasl-password-file FILE   file holding the SASL password; otherwise env KAFKA_SASL_PASSWORD (never a flag value)
  --ssl-ca-file FILE          PEM CA bundle that signs the brokers' certificates (default: Node's trusted CAs)
  --ssl-cert-file FILE        PEM client certificate (mutual TLS), with --ssl-key-file FILE
  --ssl-endpoint-identification https|none
                              none skips only the check that a broker's certificate names the host connected
                              to; the certificate chain is still verified (default https)
  --ssl-reject-unauthorized true|false
                              false accepts any broker certificate, unverified (default true)
  --client-config FILE        a Java or librdkafka client properties file: bootstrap.servers (metadata.broker.list),
                              client.id, security.protocol, sasl.mechanism(s), sasl.username, sasl.password,
                              sasl.jaas.config, ssl.ca.location, ssl.certificate.location, ssl.key.location,
                              ssl.key.password, ssl.endpoint.identification.algorithm; other keys are logged as
                              ignored; JKS/PKCS12 stores are refused (give PEM files)
  -h, --help                  this help`

/** The help of the flags in CONNECTION_OPTIONS, for the one-shot commands. */
export const CONNECTION_HELP = `Connection options:
  --brokers HOST:PORT[,...]   bootstrap brokers (env KAFKA_BROKERS)
  --client-id ID              client id sent to the brokers (default squeeze)
${SECURITY_AND_LOG_HELP}`

/** The help of the flags in COMMON_OPTIONS, for the long-running services. */
export const COMMON_HELP = `Connection and service options:
  --brokers HOST:PORT[,...]   bootstrap brokers (env KAFKA_BROKERS)
  --client-id ID              client id sent to the brokers (default squeeze)
${SERVICE_HELP}
${SECURITY_AND_LOG_HELP}`

/** node:util parseArgs, with its errors turned into one clear config error. */
export function parseCli<T extends CliOptions>(
  argv: readonly string[],
  options: T
): ReturnType<typeof parseArgs<{ options: T; allowPositionals: true; strict: true; args: string[] }>> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
  } catch (err) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `${errorMessage(err).replace(/\. To specify.*$/, '')}; see --help`
    )
  }
}

/** A command's flags; undefined once `--help` has printed `help` to stdout (the command then exits 0). */
export function parseCommandLine<T extends CliOptions & { help: { type: 'boolean'; short: 'h' } }>(
  argv: readonly string[],
  options: T,
  help: string
): ReturnType<typeof parseCli<T>> | undefined {
  const parsed = parseCli(argv, options)
  if ((parsed.values as { help?: boolean }).help !== true) return parsed
  process.stdout.write(`${helpFor(process.stdout, help)}\n`)
  return undefined
}

export function requireString(value: string | undefined, flag: string, hint: string): string {
  if (value === undefined || value.trim() === '')
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `missing --${flag}: ${hint}`)
  return value
}

export function parseInteger(
  value: string | undefined,
  flag: string,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER
): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--${flag} must be a whole number from ${min} to ${max}, got "${value}"`
    )
  }
  return n
}

export function oneOf<T extends string>(
  value: string | undefined,
  flag: string,
  allowed: readonly T[],
  fallback: T
): T {
  if (value === undefined) return fallback
  if (!(allowed as readonly string[]).includes(value)) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--${flag} must be one of ${allowed.join(', ')}, got "${value}"`)
  }
  return value as T
}

/** `host:port` or `[IPv6 address]:port`, the port a TCP one. */
function isBrokerAddress(broker: string): boolean {
  const port = splitBrokerAddress(broker)?.port ?? 0
  return port >= 1 && port <= 65535
}

/**
 * Brokers, client id, TLS and SASL from the parsed flags and the environment (validated, frozen). The
 * --client-config keys squeeze does not use are logged once to `log`.
 */
export function connectionFrom(
  values: { brokers?: string | undefined; 'client-id'?: string | undefined } & SecurityFlags,
  env: NodeJS.ProcessEnv,
  log?: Pick<Logger, 'warn'>
): KafkaConnectionConfig {
  const { ssl, sasl, fileDefaults, ignoredFileSettings } = securityFrom(values, env)
  if (ignoredFileSettings.length > 0)
    log?.warn(
      { clientConfig: values['client-config'], ignored: ignoredFileSettings },
      '--client-config settings squeeze does not use were ignored'
    )
  for (const warning of tlsWarnings(ssl)) log?.warn(warning)
  const fromEnv = env.KAFKA_BROKERS === undefined || env.KAFKA_BROKERS.trim() === '' ? undefined : env.KAFKA_BROKERS
  const list = requireString(
    values.brokers ?? fromEnv ?? fileDefaults.brokers,
    'brokers',
    'give --brokers host:port or set KAFKA_BROKERS'
  )
  const brokers = list
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '')
  const bad = brokers.filter((b) => !isBrokerAddress(b))
  if (bad.length > 0)
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `invalid broker address ${bad.join(', ')}: use host:port, or [IPv6 address]:port, with a port from 1 to 65535`
    )
  return Object.freeze({
    ...DEFAULT_CONNECTION,
    brokers,
    clientId: values['client-id'] ?? fileDefaults.clientId ?? DEFAULT_CONNECTION.clientId,
    ...(ssl === undefined ? {} : { ssl }),
    ...(sasl === undefined ? {} : { sasl })
  })
}

export interface ServiceOptions {
  readonly logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent'
  readonly metricsPort: number | undefined
  readonly metricsHost: string
  /** How long start-up keeps retrying an unreachable cluster or missing topics; 0 fails at once. */
  readonly waitForBrokersMs: number
}

export function serviceOptionsFrom(values: {
  'log-level'?: string | undefined
  'metrics-port'?: string | undefined
  'metrics-host'?: string | undefined
  'wait-for-brokers-s'?: string | undefined
}): ServiceOptions {
  return Object.freeze({
    logLevel: oneOf(
      values['log-level'],
      'log-level',
      ['trace', 'debug', 'info', 'warn', 'error', 'silent'] as const,
      'info'
    ),
    metricsPort: parseInteger(values['metrics-port'], 'metrics-port', 0, 65535),
    metricsHost: values['metrics-host'] ?? '127.0.0.1',
    waitForBrokersMs: (parseInteger(values['wait-for-brokers-s'], 'wait-for-brokers-s', 0, 31 * 24 * 3600) ?? 0) * 1000
  })
}
