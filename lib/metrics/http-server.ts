import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'

export interface MetricsServer {
  readonly port: number
  close(): Promise<void>
}

export interface HealthProbe {
  /** Process is alive and not wedged. */
  live(): boolean
  /** Connected to the cluster and able to do its job. */
  ready(): boolean
  /** Why it is not ready, for the /readyz body (default "not ready"). */
  notReadyReason?(): string | undefined
}

/** Serves /metrics, /healthz and /readyz; port 0 picks a free port. */
export async function startMetricsServer(registry: Registry, options: { port: number; host: string; health?: HealthProbe }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/metrics') {
      registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (err: unknown) => res.writeHead(500).end(String(err))
      )
      return
    }
    if (path === '/healthz' || path === '/readyz') {
      const ok = options.health === undefined ? true : path === '/healthz' ? options.health.live() : options.health.ready()
      const why = path === '/readyz' ? options.health?.notReadyReason?.() ?? 'not ready' : 'not ready'
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : `${why}\n`)
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  return {
    port,
    close: () => (closing ??= new Promise<void>((resolve) => server.close(() => resolve())))
  }
}
