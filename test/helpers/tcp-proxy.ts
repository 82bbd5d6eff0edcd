import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { startKraftBroker, type EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { freePort } from './ports.js'

/**
 * A loopback TCP proxy a test can degrade: `stall()` keeps connections open but forwards nothing (a hung
 * network), `cut()` drops every connection and refuses new ones, `heal()` restores normal forwarding.
 */
export interface TcpProxy {
  readonly port: number
  setTarget(port: number): void
  stall(): void
  cut(): void
  heal(): void
  close(): Promise<void>
}

export async function startTcpProxy(port = 0): Promise<TcpProxy> {
  let targetPort = 0
  let mode: 'pass' | 'stall' | 'cut' = 'pass'
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
    forward(upstream, client)
    const close = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('close', close).on('error', close)
    upstream.on('close', close).on('error', close)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    setTarget: (p) => (targetPort = p),
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
    stop: async () => {
      await broker.stop()
      await proxy.close()
    }
  }
}
