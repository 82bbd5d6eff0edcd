/**
 * Java and librdkafka client properties files, as far as squeeze reads them: the properties syntax, the JAAS line
 * and the settings squeeze uses. Problems are collected, not thrown, so every one is reported at once; none quotes
 * a value, which may be a secret.
 */
import { errorMessage } from '../errors.js'

// node:fs from process.getBuiltinModule, not an ESM import: only a run with a properties file reads one.
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs')

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

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value
}
