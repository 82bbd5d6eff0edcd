import type { Registry } from 'prom-client'
import { startMetricsServer, type MetricsServer } from '../metrics/http-server.js'
import type { ServiceOptions } from '../config/cli.js'
import { watchEventLoop } from './event-loop-health.js'

/** Whether the service has done its start-up (connected, topics found); /readyz answers 503 until then. */
export interface Readiness {
  ready: boolean
  /** Why not yet, for the /readyz body (a short phrase and an error code, never a user name or password). */
  reason?: string
}

/**
 * Serves /metrics, /healthz and /readyz when --metrics-port is given; nothing otherwise. /healthz answers 503
 * while the event loop is held longer than the bound (see event-loop-health.ts).
 */
export async function startServiceEndpoints(
  registry: Registry,
  service: ServiceOptions,
  readiness: Readiness
): Promise<MetricsServer | undefined> {
  if (service.metricsPort === undefined) return undefined
  const loop = watchEventLoop()
  try {
    const server = await startMetricsServer(registry, {
      port: service.metricsPort,
      host: service.metricsHost,
      health: {
        live: loop.healthy,
        notLiveReason: loop.reason,
        ready: () => readiness.ready,
        notReadyReason: () => readiness.reason
      }
    })
    return {
      port: server.port,
      close: async () => {
        loop.stop()
        await server.close()
      }
    }
  } catch (err) {
    loop.stop()
    throw err
  }
}
