/**
 * Picks the Kafka that tests, benches and demos talk to, in this order:
 *   (a) KAFKA_BROKERS=host:port[,host:port…]  an existing cluster; stop() leaves it alone;
 *   (b) testcontainers, when a Docker engine answers  `apache/kafka:<kafka/pom.xml version>` (skip with
 *       SQUEEZE_NO_TESTCONTAINERS=1; the "is there a Docker engine" check is bounded to 3 s);
 *   (c) the embedded JVM broker (kraft-broker.ts).
 * SQUEEZE_REQUIRE_CONTAINER_BROKER=1 (set by the test command in CI) turns the fall-back from (b) to (c) into an
 * error: CI proves the container path instead of silently testing the JVM broker. SQUEEZE_NO_TESTCONTAINERS=1 and
 * `jvmOnly` are explicit choices of the JVM broker and stay allowed.
 */
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import { kafkaVersion } from './kafka-jars.js'
import { retry } from '../retry.js'
import {
  SQUEEZE_CLUSTER_ID,
  defaultServerProperties,
  describeClusterOnce,
  startKraftBroker,
  type EmbeddedBroker,
  type KraftBrokerOptions
} from './kraft-broker.js'

export { killEmbeddedBrokersOnExit } from './kraft-broker.js'

export type BrokerKind = 'external' | 'testcontainers' | 'jvm'

export interface AcquiredBroker {
  brokers: string[]
  kind: BrokerKind
  stop(): Promise<void>
  /** Set for kind 'jvm': data dir, log file, restart(). */
  embedded?: EmbeddedBroker
}

/** A plain function or any logger with info() (pino's fits). */
export type BrokerLog = ((msg: string) => void) | { info(msg: string): void; warn?(msg: string): void }

export interface AcquireBrokerOptions {
  /** Passed to startKraftBroker for kind 'jvm'. */
  jvm?: KraftBrokerOptions
  /** Budget for the Docker-engine check (default 3000 ms). */
  dockerCheckMs?: number
  /**
   * Skip (b): for callers that need the broker's internals, which a container does not expose (its log
   * segment files, for DumpLogSegments) or cannot be given at start (SCRAM users created at format time).
   */
  jvmOnly?: boolean
}

const DOCKER_CONTAINER_PORT = 9092
/** Containers started before the container path gives up: one that exits during its start is started again once. */
const CONTAINER_START_ATTEMPTS = 2
/** Lines of a container's own output kept for the error when it does not start. */
const CONTAINER_TAIL_LINES = 15

function logger(log: BrokerLog | undefined): { info(msg: string): void; warn(msg: string): void } {
  if (log === undefined) return { info: () => {}, warn: () => {} }
  if (typeof log === 'function') return { info: log, warn: log }
  return { info: (m) => log.info(m), warn: (m) => (log.warn ?? log.info).call(log, m) }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SqueezeError(ErrorCodes.TIMEOUT, `${what} took more than ${ms} ms`)), ms)
    timer.unref()
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}

/** Resolves when a metadata request to `brokers` succeeds; throws BROKER_UNREACHABLE after `ms`. */
export async function waitForMetadata(brokers: string[], ms: number): Promise<void> {
  try {
    await retry(() => describeClusterOnce(brokers, { connectionTimeout: 2000, requestTimeout: 5000 }), {
      deadlineMs: ms,
      initialDelayMs: 250,
      maxDelayMs: 1000,
      shouldRetry: () => true
    })
  } catch (last) {
    throw new SqueezeError(
      ErrorCodes.BROKER_UNREACHABLE,
      `Kafka at ${brokers.join(',')} did not answer a metadata request within ${ms} ms: ${errorMessage(last)}`,
      { retriable: true, cause: last }
    )
  }
}

export type Testcontainers = typeof import('testcontainers')

/**
 * The testcontainers module when a container runtime answers within `ms`, else why not (never throws).
 * testcontainers is a dev dependency, loaded only here: production installs (the image) do not have it.
 */
async function dockerRuntime(ms: number): Promise<{ tc: Testcontainers; host: string } | { unavailable: string }> {
  let tc: Testcontainers
  try {
    tc = await withTimeout(import('testcontainers'), ms, 'importing testcontainers')
  } catch (e) {
    const missing = e instanceof Error && 'code' in e && e.code === 'ERR_MODULE_NOT_FOUND'
    return {
      unavailable: missing
        ? 'testcontainers is not installed (a dev dependency)'
        : `testcontainers did not load: ${errorMessage(e)}`
    }
  }
  try {
    const client = await withTimeout(tc.getContainerRuntimeClient(), ms, 'finding a container runtime')
    return { tc, host: client.info.containerRuntime.host }
  } catch {
    return { unavailable: 'no Docker engine' }
  }
}

async function freeHostPort(): Promise<number> {
  const { createServer } = await import('node:net')
  return new Promise<number>((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

/**
 * apache/kafka in KRaft combined mode, configured through KAFKA_* variables as in Kafka's docker examples.
 * The host port is chosen up front and bound explicitly so the advertised listener can name it.
 */
async function startContainer(tc: Testcontainers, host: string): Promise<AcquiredBroker> {
  const hostPort = await freeHostPort()
  const base = defaultServerProperties({
    host: 'localhost',
    brokerPort: 19092,
    controllerPort: 9093,
    kafkaLogDir: '/tmp/kraft-combined-logs'
  })
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(base)) {
    if (
      /^(listeners|advertised\.listeners|listener\.security\.protocol\.map|inter\.broker\.listener\.name|controller\.quorum\.voters|log\.dirs)$/.test(
        k
      )
    )
      continue
    env[`KAFKA_${k.replace(/\./g, '_').toUpperCase()}`] = v
  }
  Object.assign(env, {
    CLUSTER_ID: SQUEEZE_CLUSTER_ID,
    KAFKA_LISTENERS: `PLAINTEXT://:${DOCKER_CONTAINER_PORT},BROKER://:19092,CONTROLLER://:9093`,
    KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${hostPort},BROKER://localhost:19092`,
    KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT',
    KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
    KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
    KAFKA_LOG_DIRS: '/tmp/kraft-combined-logs'
  })
  // The container's last lines: when it exits during start, they say why, where testcontainers says only that its
  // log ended.
  const tail: string[] = []
  let container
  try {
    container = await new tc.GenericContainer(`apache/kafka:${kafkaVersion()}`)
      .withEnvironment(env)
      .withExposedPorts({ container: DOCKER_CONTAINER_PORT, host: hostPort })
      .withWaitStrategy(tc.Wait.forLogMessage(/Kafka Server started/))
      .withStartupTimeout(120_000)
      .withLogConsumer((stream) => {
        stream.on('data', (chunk: unknown) => {
          for (const line of String(chunk).split('\n')) if (line.trim() !== '') tail.push(line.trim())
          if (tail.length > CONTAINER_TAIL_LINES) tail.splice(0, tail.length - CONTAINER_TAIL_LINES)
        })
      })
      .start()
  } catch (e) {
    const lines = tail.length === 0 ? '' : `; its last lines: ${tail.join(' | ')}`
    throw new SqueezeError(ErrorCodes.BROKER_START, `${errorMessage(e)}${lines}`, { cause: e })
  }
  const brokers = [`${host}:${hostPort}`]
  let stopped: Promise<void> | undefined
  const stop = (): Promise<void> => {
    stopped ??= container.stop().then(() => undefined)
    return stopped
  }
  try {
    await waitForMetadata(brokers, 60_000)
  } catch (e) {
    await stop().catch(() => {})
    throw e
  }
  return { brokers, kind: 'testcontainers', stop }
}

/** startContainer, tried again once after a start that failed: a container that exits during start is rare, and one
 * such exit should not cost a test file its broker. */
export async function startContainerAgain(
  tc: Testcontainers,
  host: string,
  out: { warn(msg: string): void }
): Promise<AcquiredBroker> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startContainer(tc, host)
    } catch (e) {
      if (attempt >= CONTAINER_START_ATTEMPTS) throw e
      out.warn(
        `kafka: the apache/kafka:${kafkaVersion()} container did not start (${errorMessage(e)}); starting another`
      )
    }
  }
}

function containerRequired(why: string, cause?: unknown): SqueezeError {
  return new SqueezeError(
    ErrorCodes.BROKER_START,
    `kafka: SQUEEZE_REQUIRE_CONTAINER_BROKER=1 but the containerized broker is not available (${why}); not falling back to the embedded JVM broker`,
    { cause }
  )
}

export async function acquireBroker(log?: BrokerLog, opts: AcquireBrokerOptions = {}): Promise<AcquiredBroker> {
  const out = logger(log)

  const external = (process.env['KAFKA_BROKERS'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (external.length > 0) {
    out.info(`kafka: using external brokers ${external.join(',')} (KAFKA_BROKERS)`)
    await waitForMetadata(external, 15_000)
    return { brokers: external, kind: 'external', stop: async () => {} }
  }

  if (process.env['SQUEEZE_NO_TESTCONTAINERS'] !== '1' && opts.jvmOnly !== true) {
    const required = process.env['SQUEEZE_REQUIRE_CONTAINER_BROKER'] === '1'
    const started = Date.now()
    const docker = await dockerRuntime(opts.dockerCheckMs ?? 3000)
    if ('tc' in docker) {
      out.info(`kafka: Docker engine found; starting apache/kafka:${kafkaVersion()} with testcontainers`)
      try {
        return await startContainerAgain(docker.tc, docker.host, out)
      } catch (e) {
        if (required)
          throw containerRequired(`the apache/kafka:${kafkaVersion()} container did not start: ${errorMessage(e)}`, e)
        out.warn(`kafka: testcontainers start failed (${errorMessage(e)}); falling back to the embedded JVM broker`)
      }
    } else {
      if (required) throw containerRequired(docker.unavailable)
      out.info(`kafka: ${docker.unavailable} (checked in ${Date.now() - started} ms); using the embedded JVM broker`)
    }
  }

  const t0 = Date.now()
  const embedded = await startKraftBroker(opts.jvm)
  out.info(
    `kafka: embedded Kafka ${embedded.version} (JVM, KRaft) at ${embedded.bootstrap} in ${Date.now() - t0} ms; data ${embedded.dataDir}`
  )
  return { brokers: [embedded.bootstrap], kind: 'jvm', stop: () => embedded.stop(), embedded }
}
