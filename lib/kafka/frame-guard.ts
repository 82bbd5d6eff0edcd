import type { ISocketFactory } from 'kafkajs'
import { ErrorCodes, SqueezeError } from '../errors.js'

/**
 * The largest response frame squeeze reads. A fetch asks for at most its max bytes (tens of MiB), or one batch
 * when a batch is larger, and no batch is larger than the broker let a producer send (socket.request.max.bytes,
 * 100 MiB by default); a metadata response of a large cluster is a few MiB.
 */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024

const SIZE_BYTES = 4
/** TLS record types (change_cipher_spec, alert, handshake, application_data) and the protocol's major version. */
const TLS_RECORD_TYPES: ReadonlySet<number> = new Set([0x14, 0x15, 0x16, 0x17])
const TLS_MAJOR = 0x03
const HTTP = Buffer.from('HTTP/')
/** How much of a text answer is quoted, at most: its first line. */
const QUOTE_CHARS = 60

/**
 * kafkajs's socket factory, with each socket's responses checked as they arrive: every Kafka response starts with
 * its size, and kafkajs buffers a response until that many bytes came. A listener that is not Kafka's (an HTTP
 * port, a TLS listener spoken to in plaintext) answers with bytes whose "size" is hundreds of MiB: kafkajs would
 * wait for them until its request timeout, holding whatever else the peer sends. Such a socket is destroyed at its
 * first impossible size, with an error that names what answered (NOT_KAFKA, kept as the code of kafkajs's
 * connection error: see connectionFailure).
 */
export function guardedSocketFactory(base: ISocketFactory): ISocketFactory {
  return (options) => {
    const socket = base(options)
    const at = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`
    const header = Buffer.alloc(SIZE_BYTES)
    let headerBytes = 0
    /** Bytes of the current response's body still to come. */
    let bodyLeft = 0
    let responses = 0
    socket.on('data', (chunk: Buffer) => {
      let i = 0
      while (i < chunk.length) {
        if (bodyLeft > 0) {
          const skip = Math.min(bodyLeft, chunk.length - i)
          bodyLeft -= skip
          i += skip
          continue
        }
        const take = Math.min(SIZE_BYTES - headerBytes, chunk.length - i)
        const whole = take === SIZE_BYTES
        chunk.copy(header, headerBytes, i, i + take)
        headerBytes += take
        i += take
        if (headerBytes < SIZE_BYTES) return
        headerBytes = 0
        const size = header.readInt32BE(0)
        if (size < 0 || size > MAX_RESPONSE_BYTES) {
          socket.destroy(notKafka(at, whole ? chunk.subarray(i - SIZE_BYTES) : header, size, responses))
          return
        }
        bodyLeft = size
        responses++
      }
    })
    return socket
  }
}

/** The error for a peer whose response at `bytes` claims `size` bytes, after `responses` well-framed ones. */
function notKafka(at: string, bytes: Buffer, size: number, responses: number): SqueezeError {
  const heard = responses === 0 ? describeAnswer(bytes) : undefined
  const what =
    heard ??
    `sent a response of ${size} bytes after ${responses} others, more than squeeze reads (${MAX_RESPONSE_BYTES} bytes)`
  return new SqueezeError(ErrorCodes.NOT_KAFKA, `${at} ${what}`)
}

/** What a first answer's bytes say about the listener, with what to do; undefined when they say nothing. */
function describeAnswer(bytes: Buffer): string | undefined {
  if (
    bytes.length >= 3 &&
    TLS_RECORD_TYPES.has(bytes[0] as number) &&
    bytes[1] === TLS_MAJOR &&
    (bytes[2] as number) <= 4
  )
    return (
      'answered in TLS: it is a TLS listener, and squeeze spoke plaintext; add --security-protocol SSL ' +
      '(SASL_SSL where it needs credentials) and --ssl-ca-file'
    )
  const text = bytes.toString('latin1', 0, Math.min(bytes.length, QUOTE_CHARS)).split(/\r?\n/)[0] ?? ''
  if (bytes.subarray(0, HTTP.length).equals(HTTP))
    return `answered in HTTP ("${text}"): it is not a Kafka listener; check the port in --brokers`
  if (/^[\x20-\x7e]{4,}/.test(text))
    return `answered with text ("${text}"), not a Kafka response: it is not a Kafka listener; check the port in --brokers`
  return `answered with a response of ${bytes.readInt32BE(0)} bytes, which no Kafka listener sends; check the port in --brokers and --security-protocol`
}
