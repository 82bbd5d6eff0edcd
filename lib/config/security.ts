/**
 * TLS and SASL options for kafkajs, built from the settings security-input.ts gathers (flags, env, a client
 * properties file). The SASL password ends up only as a non-enumerable property of the kafkajs `sasl` object:
 * JSON.stringify, pino, spread and util.inspect do not see it, and no error message built here quotes it.
 */
import type { ConnectionOptions } from 'node:tls'
import type { SASLOptions } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import {
  SASL_MECHANISMS,
  securityInput,
  type SaslMechanism,
  type SecurityFlags,
  type SecurityInput,
  type SecurityProtocol
} from './security-input.js'

export { SASL_MECHANISMS, SECURITY_PROTOCOLS } from './security-input.js'
export type { SaslMechanism, SecurityFlags, SecurityProtocol } from './security-input.js'

// Built-ins from process.getBuiltinModule, not ESM imports: node:crypto's namespace costs 0.02 CPU s and node:fs's
// loads its streams, at every start-up, though only a run with TLS files reads any.
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs')

/** What a connection needs: ssl and sasl both undefined for PLAINTEXT. */
export interface SecuritySettings {
  readonly protocol: SecurityProtocol
  readonly ssl?: ConnectionOptions | boolean
  readonly sasl?: SASLOptions
  /** bootstrap.servers and client.id from --client-config: used when neither flag nor env names them. */
  readonly fileDefaults: { readonly brokers?: string; readonly clientId?: string }
  /** Keys of the --client-config file squeeze does not use (names only: values may be secrets). */
  readonly ignoredFileSettings: readonly string[]
}

const LOGIN_MODULES: Readonly<Record<SaslMechanism, string>> = {
  PLAIN: 'org.apache.kafka.common.security.plain.PlainLoginModule',
  'SCRAM-SHA-256': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  'SCRAM-SHA-512': 'org.apache.kafka.common.security.scram.ScramLoginModule'
}

/**
 * Reads flags, env and the optional --client-config file into TLS and SASL options for kafkajs.
 * Throws one CONFIG_INVALID error listing every problem found.
 */
export function securityFrom(flags: SecurityFlags, env: NodeJS.ProcessEnv): SecuritySettings {
  const problems: string[] = []
  const input = securityInput(flags, env, problems)
  const { protocol } = input
  const usesSasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
  const usesTls = protocol === 'SSL' || protocol === 'SASL_SSL'
  problems.push(...saslProblems(input, usesSasl))
  const tls = tlsOptions(input, usesTls, problems)
  if (problems.length > 0) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `invalid security settings: ${problems.join('; ')}`)
  }
  const sasl = usesSasl
    ? saslOptions(input.mechanism as SaslMechanism, input.username as string, input.password as string)
    : undefined
  const { bootstrapServers, clientId, ignored } = input.file
  return Object.freeze({
    protocol,
    ...(tls === undefined ? {} : { ssl: tls }),
    ...(sasl === undefined ? {} : { sasl }),
    fileDefaults: Object.freeze({
      ...(bootstrapServers === undefined ? {} : { brokers: bootstrapServers }),
      ...(clientId === undefined ? {} : { clientId })
    }),
    ignoredFileSettings: ignored ?? []
  })
}

/** What SASL lacks under a SASL protocol, or what SASL settings are given under another. */
function saslProblems(input: SecurityInput, usesSasl: boolean): string[] {
  const { protocol, mechanismText, mechanism, username, password, passwordFile, jaasModule } = input
  const problems: string[] = []
  if (!usesSasl) {
    const given = [
      mechanismText !== undefined ? 'a SASL mechanism' : undefined,
      username !== undefined ? 'a SASL username' : undefined,
      password !== undefined ? 'a SASL password' : undefined
    ].filter((g): g is string => g !== undefined)
    if (given.length > 0)
      problems.push(
        `${given.join(', ')} given but the security protocol is ${protocol}: use SASL_SSL or SASL_PLAINTEXT (--security-protocol)`
      )
    return problems
  }
  if (mechanismText === undefined)
    problems.push(
      `${protocol} needs a SASL mechanism: --sasl-mechanism ${SASL_MECHANISMS.join('|')} (or KAFKA_SASL_MECHANISM, sasl.mechanism)`
    )
  if (username === undefined || username === '')
    problems.push(
      `SASL ${mechanism ?? ''} needs a username: --sasl-username or KAFKA_SASL_USERNAME (or sasl.username, sasl.jaas.config)`.replace(
        '  ',
        ' '
      )
    )
  if ((password === undefined || password === '') && passwordFile === undefined)
    problems.push(
      'SASL needs a password: set KAFKA_SASL_PASSWORD or give --sasl-password-file FILE (or sasl.password, sasl.jaas.config); it is never taken from a flag value'
    )
  if (mechanism !== undefined && jaasModule !== undefined && jaasModule !== LOGIN_MODULES[mechanism]) {
    problems.push(`sasl.jaas.config uses ${jaasModule}, but ${mechanism} needs ${LOGIN_MODULES[mechanism]}`)
  }
  return problems
}

/** The TLS options (`true` for Node's defaults), undefined without TLS; problems go to `problems`. */
function tlsOptions(input: SecurityInput, usesTls: boolean, problems: string[]): ConnectionOptions | true | undefined {
  const { caFile, certFile, keyFile } = input
  const rejectUnauthorized = trueOrFalse(input.rejectUnauthorizedText, problems)
  const checkHostName = endpointIdentification(input.endpointIdentificationText, problems)
  if (usesTls) {
    if ((certFile === undefined) !== (keyFile === undefined))
      problems.push('a client certificate needs both --ssl-cert-file and --ssl-key-file')
  } else {
    const given = [
      caFile !== undefined ? '--ssl-ca-file' : undefined,
      certFile !== undefined ? '--ssl-cert-file' : undefined,
      keyFile !== undefined ? '--ssl-key-file' : undefined,
      ...input.tlsCheckFlags
    ].filter((g): g is string => g !== undefined)
    if (given.length > 0)
      problems.push(
        `${given.join(', ')} given but the security protocol is ${input.protocol}: use SSL or SASL_SSL (--security-protocol)`
      )
    return undefined
  }
  const ca = caFile !== undefined ? readPem(caFile, 'CA', problems) : undefined
  const cert = certFile !== undefined ? readPem(certFile, 'certificate', problems) : undefined
  const key = keyFile !== undefined ? readKey(keyFile, input.keyPassword, problems) : undefined
  const tls: ConnectionOptions = {
    rejectUnauthorized,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    // Java's and librdkafka's "no endpoint identification" skips the host-name check only: the chain is still verified.
    ...(checkHostName ? {} : { checkServerIdentity: () => undefined })
  }
  return Object.keys(tls).length === 1 && rejectUnauthorized ? true : tls
}

/**
 * What the TLS options turn off, one warning each: a connection that does not verify the broker's certificate, or
 * its host name, can be read and altered by anyone on the path who presents some other certificate.
 */
export function tlsWarnings(ssl: ConnectionOptions | boolean | undefined): string[] {
  if (ssl === undefined || typeof ssl === 'boolean') return []
  const warnings: string[] = []
  if (ssl.rejectUnauthorized === false) {
    warnings.push(
      'TLS certificate verification is off (--ssl-reject-unauthorized false, ' +
        'enable.ssl.certificate.verification=false): any server can pose as the broker'
    )
  }
  if (ssl.checkServerIdentity !== undefined) {
    warnings.push(
      'TLS host-name checking is off (--ssl-endpoint-identification none, ' +
        'ssl.endpoint.identification.algorithm=): a certificate for any host is accepted'
    )
  }
  return warnings
}

function trueOrFalse(text: string | undefined, problems: string[]): boolean {
  if (text === undefined || text === 'true') return true
  if (text === 'false') return false
  problems.push(
    `--ssl-reject-unauthorized must be true or false (so must enable.ssl.certificate.verification), got "${text}"`
  )
  return true
}

/** Java turns the host-name check off with an empty value, librdkafka with "none"; both default to "https". */
function endpointIdentification(text: string | undefined, problems: string[]): boolean {
  if (text === undefined) return true
  const value = text.trim().toLowerCase()
  if (value === 'https') return true
  if (value === '' || value === 'none') return false
  problems.push(
    `--ssl-endpoint-identification (ssl.endpoint.identification.algorithm) must be https or none, got "${text}"`
  )
  return true
}

/**
 * The kafkajs SASL object. kafkajs reads `password` by property access and caches its authenticator on
 * the object, so it stays extensible; the password is non-enumerable, so logging or copying the object
 * never carries it.
 */
export function saslOptions(mechanism: SaslMechanism, username: string, password: string): SASLOptions {
  const sasl: Record<string, unknown> = { mechanism: mechanism.toLowerCase(), username }
  Object.defineProperty(sasl, 'password', { value: password, enumerable: false, writable: false, configurable: false })
  return sasl as unknown as SASLOptions
}

/** A PEM private key; an encrypted one is decrypted here (ssl.key.password), so no passphrase is kept around. */
function readKey(path: string, passphrase: string | undefined, problems: string[]): Buffer | undefined {
  const pem = readPem(path, 'key', problems)
  if (pem === undefined || passphrase === undefined) return pem
  try {
    return Buffer.from(
      process
        .getBuiltinModule('node:crypto')
        .createPrivateKey({ key: pem, passphrase })
        .export({ format: 'pem', type: 'pkcs8' })
    )
  } catch (err) {
    problems.push(`cannot decrypt TLS key file ${path} with ssl.key.password: ${errorMessage(err)}`)
    return undefined
  }
}

function readPem(path: string, what: string, problems: string[]): Buffer | undefined {
  try {
    const pem = fs().readFileSync(path)
    if (!pem.includes('-----BEGIN ')) problems.push(`TLS ${what} file ${path} is not PEM (no "-----BEGIN" line)`)
    return pem
  } catch (err) {
    problems.push(`cannot read TLS ${what} file ${path}: ${errorMessage(err)}`)
    return undefined
  }
}
