/**
 * Where each TLS and SASL setting comes from: a flag, else the environment, else the --client-config file. The
 * password is read from KAFKA_SASL_PASSWORD, a password file or the properties file, never from a flag value (it
 * would show in `ps`). Problems are collected for one error listing all of them.
 */
import { errorMessage } from '../errors.js'
import { loadClientProperties, nonEmpty, type ClientProperties } from './client-properties.js'

// node:fs from process.getBuiltinModule, not an ESM import: only a run with a password file reads one.
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs')

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number]
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const
export type SaslMechanism = (typeof SASL_MECHANISMS)[number]

/** The flags parsed by node:util parseArgs (see SECURITY_OPTIONS in cli.ts). */
export interface SecurityFlags {
  'security-protocol'?: string | undefined
  'sasl-mechanism'?: string | undefined
  'sasl-username'?: string | undefined
  'sasl-password-file'?: string | undefined
  'ssl-ca-file'?: string | undefined
  'ssl-cert-file'?: string | undefined
  'ssl-key-file'?: string | undefined
  'ssl-endpoint-identification'?: string | undefined
  'ssl-reject-unauthorized'?: string | undefined
  'client-config'?: string | undefined
}

/** Every security setting as given, before the TLS and SASL options are built from them. */
export interface SecurityInput {
  readonly protocol: SecurityProtocol
  /** The mechanism as given (undefined: none given); `mechanism` is set when it names a known one. */
  readonly mechanismText?: string | undefined
  readonly mechanism?: SaslMechanism | undefined
  readonly username?: string | undefined
  readonly password?: string | undefined
  readonly passwordFile?: string | undefined
  /** The login module of the file's sasl.jaas.config, checked against the mechanism. */
  readonly jaasModule?: string | undefined
  readonly caFile?: string | undefined
  readonly certFile?: string | undefined
  readonly keyFile?: string | undefined
  readonly keyPassword?: string | undefined
  readonly rejectUnauthorizedText?: string | undefined
  readonly endpointIdentificationText?: string | undefined
  /** The TLS check flags given on the command line (a file's TLS defaults are harmless without TLS). */
  readonly tlsCheckFlags: readonly string[]
  readonly file: Pick<ClientProperties, 'bootstrapServers' | 'clientId' | 'ignored'>
}

/** Reads flags, env and the optional --client-config file; problems go to `problems`. */
export function securityInput(flags: SecurityFlags, env: NodeJS.ProcessEnv, problems: string[]): SecurityInput {
  const props = flags['client-config'] === undefined ? {} : loadClientProperties(flags['client-config'], problems)
  const protocolText =
    flags['security-protocol'] ?? nonEmpty(env.KAFKA_SECURITY_PROTOCOL) ?? props.securityProtocol ?? 'PLAINTEXT'
  const protocol =
    pick(
      protocolText,
      SECURITY_PROTOCOLS,
      'security protocol',
      '--security-protocol, KAFKA_SECURITY_PROTOCOL, security.protocol',
      problems
    ) ?? 'PLAINTEXT'
  const mechanismText = flags['sasl-mechanism'] ?? nonEmpty(env.KAFKA_SASL_MECHANISM) ?? props.saslMechanism
  const mechanism =
    mechanismText === undefined
      ? undefined
      : pick(
          mechanismText,
          SASL_MECHANISMS,
          'SASL mechanism',
          '--sasl-mechanism, KAFKA_SASL_MECHANISM, sasl.mechanism',
          problems
        )
  const passwordFile = flags['sasl-password-file']
  return {
    protocol,
    mechanismText,
    mechanism,
    username: flags['sasl-username'] ?? nonEmpty(env.KAFKA_SASL_USERNAME) ?? props.saslUsername ?? props.jaas?.username,
    password:
      passwordFile !== undefined
        ? readPasswordFile(passwordFile, problems)
        : (nonEmpty(env.KAFKA_SASL_PASSWORD) ?? props.saslPassword ?? props.jaas?.password),
    passwordFile,
    jaasModule: props.jaas?.module,
    caFile: flags['ssl-ca-file'] ?? props.sslCaLocation,
    certFile: flags['ssl-cert-file'] ?? props.sslCertificateLocation,
    keyFile: flags['ssl-key-file'] ?? props.sslKeyLocation,
    keyPassword: props.sslKeyPassword,
    rejectUnauthorizedText: flags['ssl-reject-unauthorized'] ?? props.sslCertificateVerification,
    endpointIdentificationText: flags['ssl-endpoint-identification'] ?? props.sslEndpointIdentification,
    tlsCheckFlags: (['ssl-reject-unauthorized', 'ssl-endpoint-identification'] as const)
      .filter((flag) => flags[flag] !== undefined)
      .map((flag) => `--${flag}`),
    file: { bootstrapServers: props.bootstrapServers, clientId: props.clientId, ignored: props.ignored }
  }
}

function pick<T extends string>(
  text: string,
  allowed: readonly T[],
  what: string,
  sources: string,
  problems: string[]
): T | undefined {
  const upper = text.trim().toUpperCase()
  if ((allowed as readonly string[]).includes(upper)) return upper as T
  problems.push(`unknown ${what} "${text}" (${sources}): use one of ${allowed.join(', ')}`)
  return undefined
}

function readPasswordFile(path: string, problems: string[]): string | undefined {
  try {
    const password = fs()
      .readFileSync(path, 'utf8')
      .replace(/\r?\n$/, '')
    if (password === '') problems.push(`--sasl-password-file ${path} is empty`)
    return password
  } catch (err) {
    problems.push(`cannot read --sasl-password-file ${path}: ${errorMessage(err)}`)
    return undefined
  }
}
