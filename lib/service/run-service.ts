import type { Registry } from 'prom-client'
import type { ServiceOptions } from '../config/cli.js'
import { connectionFailure, type ConnectTarget } from '../kafka/connect-failure.js'
import { createLogger, type Logger } from '../log/logger.js'
import { createRegistry } from '../metrics/registry.js'
import { startServiceEndpoints, type Readiness } from './endpoints.js'
import { installShutdown } from './lifecycle.js'
import { untilClusterReady } from './wait-for-cluster.js'

/** What a service's start gets from the skeleton. */
export interface ServiceContext {
  readonly log: Logger
  readonly registry: Registry
  /** Aborted by the first SIGINT/SIGTERM: stop intake, flush, close. */
  readonly signal: AbortSignal
  readonly readiness: Readiness
  /** Runs a start-up step, retried while --wait-for-brokers-s allows, /readyz saying what it waits for. */
  waitForCluster<T>(step: () => Promise<T>): Promise<T>
  /** A connect attempt whose failure says whether credentials, TLS or reachability is the problem. */
  connect<T>(attempt: Promise<T>): Promise<T>
  /** Start-up is done: /readyz answers 200 from now on, while `healthy` (if given) holds. */
  ready(healthy?: () => boolean): void
}

/** The settings the skeleton itself needs from a service's validated configuration. */
export interface ServiceSetup {
  readonly connection: ConnectTarget
  /** How long the first signal waits for the flush before exiting 1. */
  readonly shutdownTimeoutMs: number
}

export interface ServiceDefinition<C extends ServiceSetup> {
  readonly name: string
  readonly service: ServiceOptions
  /** Reads and validates the remaining settings (the logger is there for warnings); nothing connects before it returns. */
  configure(log: Logger): C
  /** Wires the service's parts and runs it; returns the exit code. Closes what it opened; the skeleton closes the endpoints. */
  start(ctx: ServiceContext, config: C): Promise<number>
}

/**
 * The start-up every long-running service shares: logger, shutdown handlers, metrics registry, /metrics /healthz
 * /readyz, waiting for the cluster, connect-failure classification, closing the endpoints. Errors propagate to
 * runCommand, which maps them to exit codes.
 */
export async function runService<C extends ServiceSetup>(definition: ServiceDefinition<C>): Promise<number> {
  const { service } = definition
  const log = createLogger({ level: service.logLevel, name: definition.name })
  const config = definition.configure(log)
  const signal = installShutdown(log, { timeoutMs: config.shutdownTimeoutMs })
  const registry = createRegistry()
  let started = false
  let healthy = (): boolean => true
  const readiness: Readiness = {
    get ready() {
      return started && healthy()
    }
  }
  const context: ServiceContext = {
    log,
    registry,
    signal,
    readiness,
    waitForCluster: (step) => untilClusterReady(step, { waitMs: service.waitForBrokersMs, log, signal, readiness }),
    connect: (attempt) => attempt.catch((err: unknown) => {
      throw connectionFailure(err, config.connection)
    }),
    ready: (check) => {
      started = true
      if (check !== undefined) healthy = check
    }
  }
  const endpoints = await startServiceEndpoints(registry, service, readiness)
  try {
    return await definition.start(context, config)
  } finally {
    await endpoints?.close()
  }
}
