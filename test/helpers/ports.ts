import { readFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'

/** A loopback port nothing listens on right now (the OS picks it; it is released before it is returned). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A free loopback port below the kernel's ephemeral range: one a test binds long after choosing it (a listener that
 * appears late) must be one no outgoing connection takes meanwhile as its local port. Connecting again and again to
 * an ephemeral-range port nothing listens on can even connect a socket to itself on it (TCP simultaneous open).
 */
export async function freePortOutsideEphemeralRange(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '32768 60999')
  const low = Number(range.trim().split(/\s+/)[0]) || 32768
  const floor = Math.min(10_000, low - 1000)
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = floor + Math.floor(Math.random() * (low - floor))
    const server = createServer()
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (bound) {
      await new Promise((resolve) => server.close(resolve))
      return port
    }
  }
  throw new Error(`no free port found below ${low}`)
}
