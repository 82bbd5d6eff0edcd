/**
 * TLS and SASL settings for every service, from flags, the environment and a Java or librdkafka client
 * properties file (precedence in that order, per setting). The SASL password is read from KAFKA_SASL_PASSWORD,
 * a password file, or the properties file (sasl.password, sasl.jaas.config), never from a flag value (it would
 * show in `ps`). It ends up only as a non-enumerable property of the kafkajs `sasl` object: JSON.stringify,
 * pino, spread and util.inspect do not see it, and no error message built here quotes it.
 */
import type { ConnectionOptions } from 'node:tls'
import type { SASLOptions } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'

// Built-ins from process.getBuiltinModule, not ESM imports: node:crypto's namespace costs 0.02 CPU s and node:fs's
// loads its streams, at every start-up, though only a run with TLS files or a properties file reads any.
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

/** A client properties file, as far as squeeze reads it. */
export interface ClientProperties {
  readonly bootstrapServers?: string
  readonly clientId?: string
  readonly securityProtocol?: string
  readonly saslMechanism?: string
  readonly saslUsername?: string
  readonly saslPassword?: string
  readonly jaas?: { readonly module: string; readonly username?: string; readonly password?: string }
  readonly sslCaLocation?: string
  readonly sslCertificateLocation?: string
  readonly sslKeyLocation?: string
  readonly sslKeyPassword?: string
  readonly sslEndpointIdentification?: string
  readonly sslCertificateVerification?: string
  readonly ignored?: readonly string[]
}

type PropertyField = Exclude<keyof ClientProperties, 'jaas' | 'ignored'>

/** Java and librdkafka spellings of the settings squeeze uses. */
const CLIENT_PROPERTIES: Readonly<Record<string, PropertyField>> = {
  'bootstrap.servers': 'bootstrapServers',
  'metadata.broker.list': 'bootstrapServers',
  'client.id': 'clientId',
  'security.protocol': 'securityProtocol',
  'sasl.mechanism': 'saslMechanism',
  'sasl.mechanisms': 'saslMechanism',
  'sasl.username': 'saslUsername',
  'sasl.password': 'saslPassword',
  'ssl.ca.location': 'sslCaLocation',
  'ssl.certificate.location': 'sslCertificateLocation',
  'ssl.key.location': 'sslKeyLocation',
  'ssl.key.password': 'sslKeyPassword',
  'ssl.endpoint.identification.algorithm': 'sslEndpointIdentification',
  'enable.ssl.certificate.verification': 'sslCertificateVerification'
}

/** Java key stores: read here only to say which PEM option replaces them. */
const STORE_SETTINGS = [
  'ssl.truststore.location',
  'ssl.truststore.type',
  'ssl.truststore.password',
  'ssl.keystore.location',
  'ssl.keystore.type',
  'ssl.keystore.password'
]

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
  const usesSasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
  const usesTls = protocol === 'SSL' || protocol === 'SASL_SSL'

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
  const username =
    flags['sasl-username'] ?? nonEmpty(env.KAFKA_SASL_USERNAME) ?? props.saslUsername ?? props.jaas?.username
  const passwordFile = flags['sasl-password-file']
  const password =
    passwordFile !== undefined
      ? readPasswordFile(passwordFile, problems)
      : (nonEmpty(env.KAFKA_SASL_PASSWORD) ?? props.saslPassword ?? props.jaas?.password)

  if (usesSasl) {
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
    if (mechanism !== undefined && props.jaas !== undefined && props.jaas.module !== LOGIN_MODULES[mechanism]) {
      problems.push(`sasl.jaas.config uses ${props.jaas.module}, but ${mechanism} needs ${LOGIN_MODULES[mechanism]}`)
    }
  } else {
    const given = [
      mechanismText !== undefined ? 'a SASL mechanism' : undefined,
      username !== undefined ? 'a SASL username' : undefined,
      password !== undefined ? 'a SASL password' : undefined
    ].filter((g): g is string => g !== undefined)
    if (given.length > 0)
      problems.push(
        `${given.join(', ')} given but the security protocol is ${protocol}: use SASL_SSL or SASL_PLAINTEXT (--security-protocol)`
      )
  }

  const caFile = flags['ssl-ca-file'] ?? props.sslCaLocation
  const certFile = flags['ssl-cert-file'] ?? props.sslCertificateLocation
  const keyFile = flags['ssl-key-file'] ?? props.sslKeyLocation
  const rejectText = flags['ssl-reject-unauthorized'] ?? props.sslCertificateVerification
  const rejectUnauthorized = trueOrFalse(rejectText, problems)
  const identificationText = flags['ssl-endpoint-identification'] ?? props.sslEndpointIdentification
  const checkHostName = endpointIdentification(identificationText, problems)
  if (usesTls) {
    if ((certFile === undefined) !== (keyFile === undefined))
      problems.push('a client certificate needs both --ssl-cert-file and --ssl-key-file')
  } else {
    const given = [
      caFile !== undefined ? '--ssl-ca-file' : undefined,
      certFile !== undefined ? '--ssl-cert-file' : undefined,
      keyFile !== undefined ? '--ssl-key-file' : undefined,
      flags['ssl-reject-unauthorized'] !== undefined ? '--ssl-reject-unauthorized' : undefined,
      flags['ssl-endpoint-identification'] !== undefined ? '--ssl-endpoint-identification' : undefined
    ].filter((g): g is string => g !== undefined)
    if (given.length > 0)
      problems.push(
        `${given.join(', ')} given but the security protocol is ${protocol}: use SSL or SASL_SSL (--security-protocol)`
      )
  }
  const ca = usesTls && caFile !== undefined ? readPem(caFile, 'CA', problems) : undefined
  const cert = usesTls && certFile !== undefined ? readPem(certFile, 'certificate', problems) : undefined
  const key = usesTls && keyFile !== undefined ? readKey(keyFile, props.sslKeyPassword, problems) : undefined

  if (problems.length > 0) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `invalid security settings: ${problems.join('; ')}`)
  }
  const tls: ConnectionOptions = {
    rejectUnauthorized,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    // Java's and librdkafka's "no endpoint identification" skips the host-name check only: the chain is still verified.
    ...(checkHostName ? {} : { checkServerIdentity: () => undefined })
  }
  const ssl = usesTls ? (Object.keys(tls).length === 1 && rejectUnauthorized ? true : tls) : undefined
  const sasl = usesSasl ? saslOptions(mechanism as SaslMechanism, username as string, password as string) : undefined
  const fileDefaults = Object.freeze({
    ...(props.bootstrapServers === undefined ? {} : { brokers: props.bootstrapServers }),
    ...(props.clientId === undefined ? {} : { clientId: props.clientId })
  })
  return Object.freeze({
    protocol,
    ...(ssl === undefined ? {} : { ssl }),
    ...(sasl === undefined ? {} : { sasl }),
    fileDefaults,
    ignoredFileSettings: props.ignored ?? []
  })
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

/** Parses a Java properties file (comments, `=`/`:`/space separators, continuation lines, escapes). */
export function parseJavaProperties(text: string): Map<string, string> {
  const props = new Map<string, string>()
  const lines = text.split(/\r\n|\r|\n/)
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] as string).replace(/^\s+/, '')
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue
    while (endsWithOddBackslashes(line) && i + 1 < lines.length)
      line = line.slice(0, -1) + (lines[++i] as string).replace(/^\s+/, '')
    const match = /^((?:\\.|[^\\=:\s])*)\s*[=:\s]?\s*(.*)$/s.exec(line)
    if (match === null) continue
    props.set(unescapeProperty(match[1] as string), unescapeProperty(match[2] as string))
  }
  return props
}

function endsWithOddBackslashes(line: string): boolean {
  const trailing = /\\*$/.exec(line)?.[0].length ?? 0
  return trailing % 2 === 1
}

function unescapeProperty(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16))
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === 'f' ? '\f' : c
  })
}

/**
 * `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="secret";`
 * Problems are described without quoting the text, which holds the password.
 */
export function parseJaasConfig(text: string): { module: string; username?: string; password?: string } {
  const head = /^\s*([A-Za-z_$][\w$.]*)\s+(required|requisite|sufficient|optional)\b/.exec(text)
  if (head === null) throw new Error('sasl.jaas.config must start with "<LoginModule class> required"')
  const options = new Map<string, string>()
  const option = /\s*([A-Za-z_][\w.-]*)\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^\s;"]+))/y
  let at = head[0].length
  for (;;) {
    option.lastIndex = at
    const m = option.exec(text)
    if (m === null) break
    options.set(m[1] as string, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] as string))
    at = option.lastIndex
  }
  if (!/^\s*;\s*$/.test(text.slice(at)))
    throw new Error('sasl.jaas.config options must be key="value" pairs ending with ";"')
  const username = options.get('username')
  const password = options.get('password')
  return {
    module: head[1] as string,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password })
  }
}

/**
 * Reads a Java or librdkafka client properties file; problems go to `problems`. Settings squeeze has no use
 * for (acks, serializers, ...) are listed in `ignored`; a Java key store is a problem that names the PEM option.
 */
export function loadClientProperties(path: string, problems: string[]): ClientProperties {
  let text: string
  try {
    text = fs().readFileSync(path, 'utf8')
  } catch (err) {
    problems.push(`cannot read --client-config ${path}: ${errorMessage(err)}`)
    return {}
  }
  const props = parseJavaProperties(text)
  const fields: Partial<Record<PropertyField, string>> = {}
  for (const [name, field] of Object.entries(CLIENT_PROPERTIES)) {
    const value = props.get(name)
    // An empty ssl.endpoint.identification.algorithm is Java's way of turning the host-name check off.
    const usable = field === 'sslEndpointIdentification' ? value : nonEmpty(value)
    if (usable === undefined) continue
    const earlier = fields[field]
    if (earlier !== undefined && earlier !== usable)
      problems.push(`--client-config ${path}: two spellings of one setting disagree (${spellings(field).join(', ')})`)
    fields[field] = usable
  }
  const trustPem = storeProblems(path, props, problems)
  if (trustPem !== undefined && fields.sslCaLocation === undefined) fields.sslCaLocation = trustPem
  let jaas: ClientProperties['jaas']
  const jaasText = props.get('sasl.jaas.config')
  if (jaasText !== undefined) {
    try {
      jaas = parseJaasConfig(jaasText)
    } catch (err) {
      problems.push(`--client-config ${path}: ${errorMessage(err)}`)
    }
  }
  const ignored = [...props.keys()].filter(
    (k) => CLIENT_PROPERTIES[k] === undefined && k !== 'sasl.jaas.config' && !STORE_SETTINGS.includes(k)
  )
  return Object.freeze({ ...fields, ...(jaas === undefined ? {} : { jaas }), ignored: Object.freeze(ignored) })
}

function spellings(field: PropertyField): string[] {
  return Object.entries(CLIENT_PROPERTIES)
    .filter(([, f]) => f === field)
    .map(([name]) => name)
}

/**
 * Node's TLS reads PEM only. A PEM truststore (ssl.truststore.type=PEM) is a CA file and is returned; a JKS or
 * PKCS12 truststore or any keystore is a problem naming the option to use instead and the command that converts.
 */
function storeProblems(path: string, props: ReadonlyMap<string, string>, problems: string[]): string | undefined {
  const trustLocation = nonEmpty(props.get('ssl.truststore.location'))
  // Kafka's Java client defaults both store types to JKS.
  const trustType = (nonEmpty(props.get('ssl.truststore.type')) ?? 'JKS').toUpperCase()
  if (trustLocation !== undefined) {
    if (trustType === 'PEM') return trustLocation
    problems.push(
      `--client-config ${path}: ssl.truststore.location is a ${trustType} truststore, which squeeze does not read; give its CA certificates as a PEM file ` +
        `with --ssl-ca-file (or ssl.ca.location), e.g. keytool -exportcert -rfc -keystore ${trustLocation} -alias CA_ALIAS > ca.pem`
    )
  }
  const keyLocation = nonEmpty(props.get('ssl.keystore.location'))
  if (keyLocation !== undefined) {
    const keyType = (nonEmpty(props.get('ssl.keystore.type')) ?? 'JKS').toUpperCase()
    problems.push(
      `--client-config ${path}: ssl.keystore.location is a ${keyType} keystore, which squeeze does not read; give the client certificate and key as PEM files ` +
        `with --ssl-cert-file and --ssl-key-file (or ssl.certificate.location, ssl.key.location), e.g. openssl pkcs12 -in ${keyLocation} -nokeys -out client.pem ` +
        'and -nocerts -nodes -out client.key (a JKS keystore first goes through keytool -importkeystore -deststoretype PKCS12)'
    )
  }
  return undefined
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

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value
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
