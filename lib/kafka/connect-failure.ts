import type { SASLOptions } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'

/** What a connect attempt aimed at: the brokers and, for the hint, who it tried to log in as. */
export interface ConnectTarget {
  readonly brokers: readonly string[]
  readonly sasl?: SASLOptions
}

const CONNECT_CODES: ReadonlySet<string> = new Set([
  ErrorCodes.AUTH_FAILED,
  ErrorCodes.TLS_HANDSHAKE,
  ErrorCodes.BROKER_UNREACHABLE,
  ErrorCodes.NOT_KAFKA
])
const TLS_ERROR_CODES =
  /^(ERR_TLS_|ERR_SSL_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_|CERT_|HOSTNAME_MISMATCH|ERR_OSSL)/
const TLS_MESSAGES = /certificate|TLS|SSL routines/i
/** kafkajs's error for a connection the peer ended. */
const CLOSED_BY_BROKER = 'KafkaJSConnectionClosedError'
const KAFKAJS_CONNECTION_ERRORS: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  CLOSED_BY_BROKER,
  'KafkaJSSASLAuthenticationError'
])
/** What a listener without SASL answers a SaslHandshake with. */
const NO_SASL_HERE = 'ILLEGAL_SASL_STATE'
/** The words kafkajs puts before a socket error's message. */
const KAFKAJS_PREFIX = /^Connection error: /

/**
 * A connect failure told apart: wrong credentials (AUTH_FAILED), a TLS problem (TLS_HANDSHAKE), or no broker
 * answering (BROKER_UNREACHABLE, the only retriable one), each with the hint that fits. Applying it again to
 * its own result gives the same classification, so a wrapped start-up error can be described once more with
 * the target it was aimed at; squeeze's other errors come back unchanged. kafkajs messages never carry the password.
 */
export function connectionFailure(err: unknown, target?: ConnectTarget): SqueezeError {
  if (err instanceof SqueezeError && !CONNECT_CODES.has(err.code)) return err
  const chain = causeChain(err)
  const brokers = target?.brokers.join(',') ?? brokerOf(chain)
  const at = brokers === undefined ? '' : ` at ${brokers}`
  const auth =
    chain.find((e) => nameOf(e) === 'KafkaJSSASLAuthenticationError') ??
    chain.find((e) => codeOf(e) === ErrorCodes.AUTH_FAILED)
  if (auth !== undefined) {
    const who =
      target?.sasl === undefined
        ? ''
        : ` for user ${(target.sasl as { username?: string }).username ?? '?'} (SASL ${target.sasl.mechanism.toUpperCase()})`
    return new SqueezeError(
      ErrorCodes.AUTH_FAILED,
      `authentication failed${who}${at}: ${rootMessage(auth)}; check sasl.username/password ` +
        '(--sasl-username, KAFKA_SASL_PASSWORD or --sasl-password-file) and --sasl-mechanism',
      { cause: err }
    )
  }
  // Before the TLS check: what answered may have been a TLS listener, and the message says so.
  // The frame guard's code, on the kafkajs error that carries it (not a NOT_KAFKA of squeeze's own, classified before).
  const notKafka = chain.find((e) => !(e instanceof SqueezeError) && codeOf(e) === ErrorCodes.NOT_KAFKA)
  if (notKafka !== undefined)
    return new SqueezeError(ErrorCodes.NOT_KAFKA, rootMessage(notKafka).replace(KAFKAJS_PREFIX, ''), { cause: err })
  if (chain.some((e) => typeOf(e) === NO_SASL_HERE))
    return new SqueezeError(
      ErrorCodes.NOT_KAFKA,
      `the listener${at} does not take SASL (${NO_SASL_HERE}): it is a PLAINTEXT or SSL listener, so drop the SASL ` +
        "settings (--security-protocol PLAINTEXT or SSL), or give the port of the cluster's SASL listener",
      { cause: err }
    )
  const tls =
    chain.find((e) => TLS_ERROR_CODES.test(codeOf(e))) ??
    chain.find((e) => !(e instanceof SqueezeError) && TLS_MESSAGES.test(errorMessage(e))) ??
    chain.find((e) => codeOf(e) === ErrorCodes.TLS_HANDSHAKE)
  if (tls !== undefined) {
    const message = rootMessage(tls)
    return new SqueezeError(
      ErrorCodes.TLS_HANDSHAKE,
      `TLS handshake${at} failed: ${message}; ${tlsHint(chain, message)}`,
      { cause: err }
    )
  }
  if (chain.some((e) => nameOf(e) === CLOSED_BY_BROKER))
    return new SqueezeError(
      ErrorCodes.BROKER_UNREACHABLE,
      `the Kafka listener${at} closed the connection: a listener closes it on a client whose security protocol is ` +
        'not its own, so check --security-protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) and, for SASL, ' +
        '--sasl-mechanism and the credentials; else check that the cluster is up',
      { cause: err, retriable: true }
    )
  if (chain.some(isNeverAnswered))
    return new SqueezeError(
      ErrorCodes.BROKER_UNREACHABLE,
      `no Kafka broker answered${at}: the connection was taken, and no response came within the request timeout; ` +
        'check --brokers (an address that takes connections and never answers) and that the brokers are not hung',
      { cause: err, retriable: true }
    )
  return new SqueezeError(
    ErrorCodes.BROKER_UNREACHABLE,
    `cannot reach any Kafka broker${at}: ${rootMessage(err)}; check --brokers and that the cluster is up`,
    { cause: err, retriable: true }
  )
}

/**
 * connectionFailure of an error no caller classified, when it is kafkajs's about a connection: a listener can take a
 * client's first requests (ApiVersions is allowed before SASL) and close the connection at a later one, which no
 * connect step awaited. Undefined for any other error.
 */
export function unclassifiedConnectionFailure(err: unknown): SqueezeError | undefined {
  if (err instanceof SqueezeError) return undefined
  return causeChain(err).some((e) => KAFKAJS_CONNECTION_ERRORS.has(nameOf(e)) || isNeverAnswered(e))
    ? connectionFailure(err)
    : undefined
}

/**
 * kafkajs's plain Error for a broker it holds no API versions of: a connection whose first request (ApiVersions)
 * timed out, after which kafkajs's next request on it fails this way.
 */
function isNeverAnswered(e: unknown): boolean {
  return e instanceof Error && e.message === 'Broker not connected'
}

/** The broker a kafkajs connection error names (`broker`, or `host` and `port`), outermost first. */
function brokerOf(chain: readonly unknown[]): string | undefined {
  for (const e of chain) {
    const { broker, host, port } = e as { broker?: unknown; host?: unknown; port?: unknown }
    if (typeof broker === 'string') return broker
    if (typeof host === 'string' && port !== undefined) return `${host}:${String(port)}`
  }
  return undefined
}

function tlsHint(chain: readonly unknown[], message: string): string {
  if (
    chain.some((e) => codeOf(e) === 'ERR_TLS_CERT_ALTNAME_INVALID') ||
    /does not match certificate's altnames/i.test(message)
  ) {
    return (
      "the broker's certificate does not name the host connected to: use a name it holds, or turn off only the host-name check " +
      '(--ssl-endpoint-identification none, or ssl.endpoint.identification.algorithm= in --client-config)'
    )
  }
  if (/disconnected before secure TLS connection was established/i.test(message)) {
    return (
      'the listener closed the connection in the TLS handshake: it may not be a TLS listener (PLAINTEXT or ' +
      'SASL_PLAINTEXT: drop --security-protocol SSL, or give SASL_PLAINTEXT), or it requires a client certificate ' +
      '(--ssl-cert-file, --ssl-key-file)'
    )
  }
  if (/certificate required|handshake failure|bad certificate|unknown ca/i.test(message)) {
    return 'the broker refused the client: it may require a client certificate signed by a CA it trusts (--ssl-cert-file, --ssl-key-file)'
  }
  return "check --ssl-ca-file (the CA that signed the brokers' certificates) and --security-protocol"
}

/** The error and its causes (kafkajs nests the original as `originalError`), outermost first. */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = []
  for (
    let e: unknown = err;
    e !== undefined && e !== null && chain.length < 8;
    e = (e as { originalError?: unknown }).originalError ?? (e as { cause?: unknown }).cause
  )
    chain.push(e)
  return chain
}

/** The message of the innermost error squeeze did not write itself, on one line (OpenSSL's end in a newline). */
function rootMessage(err: unknown): string {
  let e = err
  while (e instanceof SqueezeError && e.cause !== undefined) e = e.cause
  return errorMessage(e).replace(/\s+/g, ' ').trim()
}

/** kafkajs's name of a Kafka error code (KafkaJSProtocolError's `type`). */
function typeOf(e: unknown): string {
  return String((e as { type?: unknown }).type ?? '')
}

function nameOf(e: unknown): string {
  return String((e as { name?: unknown }).name ?? '')
}

function codeOf(e: unknown): string {
  return String((e as { code?: unknown }).code ?? '')
}
