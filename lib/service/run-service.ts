import type { Registry } from 'prom-client'
import type { ServiceOptions } from '../config/cli.js'
import { connectionFailure, type ConnectTarget } from '../kafka/connect-failure.js'
import { createLogger, type Logger } from '../log/logger.js'
import { createRegistry } from '../metrics/registry.js'
import { startServiceEndpoints, type Readiness } from './endpoints.js'
import { installShutdown } from './lifecycle.js'
import { untilClusterReady } from './wait-for-cluster.js'

/** What a one-shot command's start gets from the skeleton. */
export interface CommandContext {
  readonly log: Logger
  /** Aborted by the first SIGINT/SIGTERM: stop intake, flush, close. Never aborted when no shutdown was asked for. */
  readonly signal: AbortSignal
  /** Runs a start-up step, retried while --wait-for-brokers-s allows. */
  waitForCluster<T>(step: () => Promise<T>): Promise<T>
  /**
   * A connect attempt whose failure says whether credentials, TLS or reachability is the problem, against
   * `target` or else the configured connection (a command may learn its brokers only once it runs).
   */
  connect<T>(attempt: Promise<T>, target?: ConnectTarget): Promise<T>
  /** What is printed if the shutdown deadline passes (records accepted, acknowledged, failed): the last report. */
  reportAtDeadline(outcome: () => string): void
}

/** What a long-running service's start gets from the skeleton: a command's context, plus metrics and readiness. */
export interface ServiceContext extends CommandContext {
  readonly registry: Registry
  readonly readiness: Readiness
  /** Start-up is done: /readyz answers 200 from now on, while `healthy` (if given) holds. */
  ready(healthy?: () => boolean): void
}

/** The settings the skeleton itself needs from a command's validated configuration. */
export interface CommandSetup {
  readonly connection?: ConnectTarget
  /** How long the first signal waits for the flush before exiting 1; without it no signal handler is installed (Ctrl-C ends the process at once). */
  readonly shutdownTimeoutMs?: number
}

/** A service always talks to a configured cluster and always shuts down gracefully. */
export interface ServiceSetup extends CommandSetup {
  readonly connection: ConnectTarget
  readonly shutdownTimeoutMs: number
}

interface Definition<C, X> {
  readonly name: string
  readonly service: ServiceOptions
  /** Reads and validates the remaining settings (the logger is there for warnings); nothing connects before it returns. */
  configure(log: Logger): C
  /** Wires the parts and runs them; returns the exit code. Closes what it opened. */
  start(ctx: X, config: C): Promise<number>
}

export type CommandDefinition<C extends object> = Definition<C, CommandContext>
/** The skeleton closes the endpoints after start returns. */
export type ServiceDefinition<C extends ServiceSetup> = Definition<C, ServiceContext>

/** Logger, validated settings, shutdown handling and the cluster helpers: the start-up commands and services share. */
function begin<C extends object>(
  definition: Definition<C, never>,
  readiness?: Readiness
): { config: C; context: CommandContext } {
  const { service } = definition
  const log = createLogger({ level: service.logLevel, name: definition.name })
  const config = definition.configure(log)
  // A command's settings may carry neither (bench has no cluster and no flush).
  const setup: CommandSetup = config
  let outcome: (() => string) | undefined
  const signal =
    setup.shutdownTimeoutMs === undefined
      ? new AbortController().signal
      : installShutdown(log, { timeoutMs: setup.shutdownTimeoutMs, outcome: () => outcome?.() })
  return {
    config,
    context: {
      log,
      signal,
      reportAtDeadline: (report) => {
        outcome = report
      },
      waitForCluster: (step) =>
        untilClusterReady(step, {
          waitMs: service.waitForBrokersMs,
          log,
          signal,
          ...(readiness === undefined ? {} : { readiness })
        }),
      connect: (attempt, target) =>
        attempt.catch((err: unknown) => {
          throw connectionFailure(err, target ?? setup.connection)
        })
    }
  }
}

/**
 * The skeleton of a command that runs once and exits (compare, bench): logger, shutdown handlers when asked
 * for, connect-failure classification. Errors propagate to runCommand, which maps them to exit codes.
 */
export async function runOneShot<C extends object>(definition: CommandDefinition<C>): Promise<number> {
  const { config, context } = begin(definition)
  return definition.start(context, config)
}

/**
 * The start-up every long-running service shares: a command's skeleton, plus the metrics registry,
 * /metrics /healthz /readyz, and closing the endpoints.
 */
export async function runService<C extends ServiceSetup>(definition: ServiceDefinition<C>): Promise<number> {
  let started = false
  let healthy = (): boolean => true
  const readiness: Readiness = {
    get ready() {
      return started && healthy()
    }
  }
  const { config, context } = begin(definition, readiness)
  // Node's process metrics only where something can scrape them: collecting them loads 50 more modules.
  const registry = createRegistry({ defaultMetrics: definition.service.metricsPort !== undefined })
  const endpoints = await startServiceEndpoints(registry, definition.service, readiness)
  try {
    return await definition.start(
      {
        ...context,
        registry,
        readiness,
        ready: (check) => {
          started = true
          if (check !== undefined) healthy = check
        }
      },
      config
    )
  } finally {
    await endpoints?.close()
  }
}
