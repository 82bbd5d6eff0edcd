import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { startKraftBroker, type EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { freePort } from './ports.js'

/**
 * A loopback TCP proxy a test can degrade: `stall()` keeps connections open but forwards nothing (a hung
 * network), `cut()` drops every connection and refuses new ones, `heal()` restores normal forwarding.
 * `rewriteResponses(fn)` hands every Kafka response frame from the broker (size-prefixed, whole) to `fn`, which
 * may change its bytes in place (a corrupt field in transit); null stops it.
 */
export interface TcpProxy {
  readonly port: number
  setTarget(port: number): void
  rewriteResponses(rewrite: ((frame: Buffer) => void) | null): void
  stall(): void
  cut(): void
  heal(): void
  close(): Promise<void>
}

/**
 * Broker-to-client bytes: passed on as they come while nothing rewrites them (undefined swallows them, as a stalled
 * link), else cut into whole response frames, each rewritten before it is passed on.
 */
type Rewriter = ((frame: Buffer) => void) | null

function forwardResponses(from: Socket, to: Socket, rewriter: () => Rewriter | undefined): void {
  let pending = Buffer.alloc(0)
  from.on('data', (chunk: Buffer) => {
    const rewrite = rewriter()
    if (rewrite === undefined) return
    if (rewrite === null && pending.length === 0) {
      to.write(chunk)
      return
    }
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const frame = pending.subarray(0, 4 + pending.readInt32BE(0))
      pending = pending.subarray(frame.length)
      rewrite?.(frame)
      to.write(frame)
    }
  })
}

/** A proxy on `host` (loopback; `::1` for an IPv6 one) and `port` (0: any free one) to the broker on 127.0.0.1. */
export async function startTcpProxy(port = 0, host = '127.0.0.1'): Promise<TcpProxy> {
  let targetPort = 0
  let mode: 'pass' | 'stall' | 'cut' = 'pass'
  let rewrite: ((frame: Buffer) => void) | null = null
  const pairs = new Set<[Socket, Socket]>()
  const server: Server = createServer((client) => {
    if (mode === 'cut' || targetPort === 0) {
      client.destroy()
      return
    }
    const upstream = connect(targetPort, '127.0.0.1')
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (mode === 'pass') to.write(chunk)
        // stalled: bytes are swallowed, as on a link that stopped delivering
      })
    forward(client, upstream)
    forwardResponses(upstream, client, () => (mode === 'pass' ? rewrite : undefined))
    const close = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('close', close).on('error', close)
    upstream.on('close', close).on('error', close)
  })
  await new Promise<void>((resolve) => server.listen(port, host, resolve))
  return {
    port: (server.address() as AddressInfo).port,
    setTarget: (p) => (targetPort = p),
    rewriteResponses: (fn) => (rewrite = fn),
    stall: () => (mode = 'stall'),
    cut: () => {
      mode = 'cut'
      for (const [a, b] of pairs) {
        a.destroy()
        b.destroy()
      }
      pairs.clear()
    },
    heal: () => (mode = 'pass'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) {
          a.destroy()
          b.destroy()
        }
        server.close(() => resolve())
      })
  }
}

export interface BrokerBehindProxy {
  readonly proxy: TcpProxy
  readonly broker: EmbeddedBroker
  /** The proxy's address, for clients. */
  readonly bootstrap: string
  stop(): Promise<void>
}

/**
 * A broker every client reaches through a proxy: it advertises the proxy's port, not its own, so the metadata
 * answers send every connection through the proxy too. `stop()` stops both.
 */
export async function startBrokerBehindProxy(): Promise<BrokerBehindProxy> {
  const proxy = await startTcpProxy()
  const brokerPort = await freePort()
  proxy.setTarget(brokerPort)
  const broker = await startKraftBroker({
    listeners: { brokerPort },
    serverOverrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port}` }
  })
  return {
    proxy,
    broker,
    bootstrap: `127.0.0.1:${proxy.port}`,
    stop: async () => {
      await broker.stop()
      await proxy.close()
    }
  }
}
