import type { Server, ServerResponse } from 'node:http'
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
  /** Why it is not live, for the /healthz body (default "not live"). */
  notLiveReason?(): string | undefined
}

/**
 * What one client may hold of the server: the endpoints serve a scraper and the kubelet, so a slow or idle
 * client (a port scan, a half-sent request) is cut off, and the number of open connections is capped.
 */
export interface HttpLimits {
  /** server.headersTimeout: the request's headers arrive within this. */
  readonly headersTimeoutMs: number
  /** server.requestTimeout: the whole request arrives within this. */
  readonly requestTimeoutMs: number
  /** server.keepAliveTimeout: an idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number
  /** server.maxConnections: connections beyond it are closed as they arrive. */
  readonly maxConnections: number
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5000,
  maxConnections: 32
}

/** Serves /metrics, /healthz and /readyz; port 0 picks a free port. */
export async function startMetricsServer(
  registry: Registry,
  options: { port: number; host: string; health?: HealthProbe; limits?: Partial<HttpLimits> }
): Promise<MetricsServer> {
  const limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits }
  // Loaded here, not with the module: a run without --metrics-port never needs node:http and its start-up cost. Not
  // `import ... from 'node:http'`: building that module's ESM namespace reads its fetch and WebSocket getters, which
  // load undici, a tenth of a second.
  const { createServer } = process.getBuiltinModule('node:http')
  let closing: Promise<void> | undefined
  // server.close() only drops keep-alive connections that are idle at that moment: one serving a scrape or a
  // probe would stay open and keep the process alive after shutdown. Answers written once closing end theirs.
  const answer = (res: ServerResponse, status: number, headers: Record<string, string>, body: string): void => {
    res.writeHead(status, closing === undefined ? headers : { ...headers, connection: 'close' }).end(body)
  }
  // Node checks the header and request timeouts on this interval (30 s by default): a tenth of the tighter one.
  const connectionsCheckingInterval = Math.max(10, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)
  const server: Server = createServer({ connectionsCheckingInterval }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/metrics') {
      registry.metrics().then(
        (body) => answer(res, 200, { 'content-type': registry.contentType }, body),
        (err: unknown) => answer(res, 500, {}, String(err))
      )
      return
    }
    if (path === '/healthz' || path === '/readyz') {
      const ok =
        options.health === undefined ? true : path === '/healthz' ? options.health.live() : options.health.ready()
      const why =
        path === '/readyz'
          ? (options.health?.notReadyReason?.() ?? 'not ready')
          : (options.health?.notLiveReason?.() ?? 'not live')
      answer(res, ok ? 200 : 503, { 'content-type': 'text/plain' }, ok ? 'ok\n' : `${why}\n`)
      return
    }
    answer(res, 404, {}, '')
  })
  server.headersTimeout = limits.headersTimeoutMs
  server.requestTimeout = limits.requestTimeoutMs
  server.keepAliveTimeout = limits.keepAliveTimeoutMs
  server.maxConnections = limits.maxConnections
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      }))
  }
}
