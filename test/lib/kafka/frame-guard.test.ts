import assert from 'node:assert/strict'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { after, describe, it } from 'node:test'
import { ErrorCodes, type SqueezeError } from '../../../lib/errors.js'
import { guardedSocketFactory, MAX_RESPONSE_BYTES } from '../../../lib/kafka/frame-guard.js'
import { defaultSocketFactory } from '../../../lib/kafka/kafkajs-internals.js'

/** A Kafka response frame: its size, then that many bytes. */
function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4)
  size.writeInt32BE(body.length)
  return Buffer.concat([size, body])
}

const servers: Server[] = []
after(() => {
  for (const s of servers) s.close()
})

/** A server that answers each connection's first bytes with `answer`, written in pieces of `piece` bytes. */
async function answering(answer: Buffer, piece = answer.length): Promise<number> {
  const server = createServer((c) => {
    c.on('error', () => {})
    c.once('data', async () => {
      for (let i = 0; i < answer.length; i += piece) {
        c.write(answer.subarray(i, i + piece))
        await new Promise((resolve) => setImmediate(resolve))
      }
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

/** What a guarded socket to `port` comes to: the bytes it was given, and the error it was destroyed with. */
async function connect(port: number, expectBytes: number): Promise<{ bytes: number; error?: SqueezeError }> {
  const factory = guardedSocketFactory(defaultSocketFactory())
  return new Promise((resolve) => {
    let bytes = 0
    let socket: Socket | undefined = undefined
    // kafkajs passes no TLS options for a plaintext listener, whatever its types say.
    const ssl = undefined as unknown as ConnectionOptions
    socket = factory({ host: '127.0.0.1', port, ssl, onConnect: () => socket?.write('hello') })
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes >= expectBytes) {
        socket?.destroy()
        resolve({ bytes })
      }
    })
    socket.on('error', (error) => resolve({ bytes, error: error as SqueezeError }))
  })
}

describe('guardedSocketFactory: a response whose size no Kafka listener sends ends the connection', () => {
  it('Kafka frames, whole or in pieces of 1 and 3 bytes (sizes split across chunks), pass untouched', async () => {
    const answer = Buffer.concat([frame(Buffer.alloc(10, 1)), frame(Buffer.alloc(0)), frame(Buffer.alloc(300, 2))])
    const large = Buffer.concat([frame(Buffer.alloc(70_000, 3)), answer])
    assert.deepEqual(await connect(await answering(large), large.length), { bytes: large.length })
    for (const piece of [1, 3]) {
      const got = await connect(await answering(answer, piece), answer.length)
      assert.deepEqual(got, { bytes: answer.length }, `pieces of ${piece}`)
    }
  })

  it('an HTTP server: NOT_KAFKA, quoting its status line', async () => {
    const port = await answering(Buffer.from('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'))
    const got = await connect(port, 1e9)
    assert.equal(got.error?.code, ErrorCodes.NOT_KAFKA)
    assert.equal(
      got.error?.message,
      `127.0.0.1:${port} answered in HTTP ("HTTP/1.1 400 Bad Request"): it is not a Kafka listener; check the port in --brokers`
    )
  })

  it('a TLS listener spoken to in plaintext (its alert record): NOT_KAFKA, saying to give --security-protocol SSL', async () => {
    // A fatal alert record, TLS 1.2: unexpected_message.
    const got = await connect(await answering(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a])), 1e9)
    assert.equal(got.error?.code, ErrorCodes.NOT_KAFKA)
    assert.match(got.error?.message ?? '', /answered in TLS: .*add --security-protocol SSL/)
  })

  it('text and binary that are neither, and an oversized frame after well-framed ones, with the header split', async () => {
    const text = await connect(await answering(Buffer.from('SSH-2.0-OpenSSH_9.2\r\n')), 1e9)
    assert.match(text.error?.message ?? '', /answered with text \("SSH-2\.0-OpenSSH_9\.2"\), not a Kafka response/)
    const huge = Buffer.alloc(8)
    huge.writeInt32BE(MAX_RESPONSE_BYTES + 1)
    const binary = await connect(await answering(huge), 1e9)
    assert.match(binary.error?.message ?? '', new RegExp(`answered with a response of ${MAX_RESPONSE_BYTES + 1} bytes`))
    const negative = await connect(await answering(Buffer.from([0xff, 0xff, 0xff, 0xf0])), 1e9)
    assert.match(negative.error?.message ?? '', /answered with a response of -16 bytes/)
    const later = Buffer.concat([frame(Buffer.alloc(5)), frame(Buffer.alloc(6)), huge])
    const third = await connect(await answering(later, 2), 1e9)
    assert.equal(third.error?.code, ErrorCodes.NOT_KAFKA)
    assert.match(
      third.error?.message ?? '',
      new RegExp(`sent a response of ${MAX_RESPONSE_BYTES + 1} bytes after 2 others`)
    )
    assert.ok(
      third.bytes < later.length,
      `${third.bytes} bytes read: none after the chunk holding the size that ended it`
    )
  })
})
