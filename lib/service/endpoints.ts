import type { Registry } from 'prom-client'
import { startMetricsServer, type MetricsServer } from '../metrics/http-server.js'
import type { ServiceOptions } from '../config/cli.js'

/** Whether the service has done its start-up (connected, topics found); /readyz answers 503 until then. */
export interface Readiness {
  ready: boolean
  /** Why not yet, for the /readyz body (a short phrase and an error code, never a user name or password). */
  reason?: string
}

/** Serves /metrics, /healthz and /readyz when --metrics-port is given; nothing otherwise. */
export async function startServiceEndpoints(registry: Registry, service: ServiceOptions, readiness: Readiness): Promise<MetricsServer | undefined> {
  if (service.metricsPort === undefined) return undefined
  return startMetricsServer(registry, { port: service.metricsPort, host: service.metricsHost, health: { live: () => true, ready: () => readiness.ready, notReadyReason: () => readiness.reason } })
}
