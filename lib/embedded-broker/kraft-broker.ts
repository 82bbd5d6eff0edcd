/**
 * A real single-node Apache Kafka (KRaft, combined broker + controller) run as a plain JVM process, for
 * machines without Docker. Jars come from kafka/pom.xml (see kafka-jars.ts).
 *
 * Layout of `dataDir`:
 *   server.properties   the generated broker config
 *   server.log          the broker's INFO log (log4j2, kafka/log4j2.properties)
 *   jvm.out             the JVM's stdout/stderr (console WARN+, JVM crashes)
 *   kafka-logs/         log.dirs: one folder per partition (`<topic>-<partition>/00000000000000000000.log`)
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import kafkajs from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
// Fixes kafkajs's request-queue timer before the probe below opens a connection (a process may load no other kafka module).
import '../kafka/kafkajs-internals.js'
import { retry } from '../retry.js'
import { ensureKafkaJars, javaBinary, kafkaLog4jConfig, kafkaVersion } from './kafka-jars.js'
import { KafkaMainClasses, runKafkaJavaTool } from './java-tools.js'

const { Kafka, logLevel } = kafkajs

/** Fixed KRaft cluster id: base64url of the 16 bytes "squeeze-kafka-11" (a random one may start with '-'). */
export const SQUEEZE_CLUSTER_ID = 'c3F1ZWV6ZS1rYWZrYS0xMQ'
const DEFAULT_NODE_ID = 1

export interface KraftListenerOptions {
  /** Interface to bind and advertise (default 127.0.0.1). */
  host?: string
  /** Client (PLAINTEXT) port; default a free port. */
  brokerPort?: number
  /** KRaft controller port; default a free port. */
  controllerPort?: number
}

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512'

/**
 * Extra client listeners with TLS (security tests). The PLAINTEXT client listener, inter-broker traffic and
 * the controller stay PLAINTEXT on loopback, so readiness checks and admin helpers work unchanged.
 */
export interface KraftSecurityOptions {
  /** The server key and certificate chain (PKCS12 by default); the key password is the store password. */
  keystore: { path: string; password: string; type?: 'PKCS12' | 'JKS' }
  /**
   * Adds SASL_SSL://host:<port> with sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512. PLAIN users
   * live in the listener's JAAS config; SCRAM users are written into the metadata log at format time
   * (StorageTool format --add-scram). Names and passwords: letters, digits, `.`, `_`, `-`.
   */
  saslSsl?: {
    port?: number
    plainUsers?: Readonly<Record<string, string>>
    scramUsers?: ReadonlyArray<{ mechanism: ScramMechanism; name: string; password: string }>
  }
  /**
   * Adds SSL://host:<port>: TLS without SASL. With `clientCaFile` (PEM), the listener requires a client
   * certificate signed by that CA (mutual TLS).
   */
  ssl?: { port?: number; clientCaFile?: string }
}

export interface KraftBrokerOptions {
  /** Data directory (config, logs, partitions). Default: a fresh temp dir, removed by stop(). A given dir is never removed. */
  logDir?: string
  /** Max heap in MiB (default 512; -Xms is min(256, heapMb)). */
  heapMb?: number
  /** Extra JVM options, after squeeze's own (a later option wins). */
  jvmArgs?: string[]
  /** Extra or replacing server.properties entries. */
  serverOverrides?: Record<string, string>
  listeners?: KraftListenerOptions
  /** How long to wait for a metadata request to succeed (default 90 s). */
  startTimeoutMs?: number
  /** Grace period between SIGTERM and SIGKILL (default 20 s). */
  stopTimeoutMs?: number
  /** Extra SASL_SSL and/or SSL listeners. */
  security?: KraftSecurityOptions
  /**
   * One node of a multi-node quorum (test/helpers/kraft-cluster.ts): its node.id and controller.quorum.voters
   * (`id@host:port,…`). Default: a single voter, node 1, on this broker's controller port.
   */
  quorum?: { nodeId: number; voters: string }
}

export interface EmbeddedBroker {
  /** "127.0.0.1:port" */
  bootstrap: string
  dataDir: string
  /** server.log (INFO) inside dataDir. */
  logFile: string
  /** Kafka's log.dirs inside dataDir: partition folders live here. */
  kafkaLogDir: string
  clusterId: string
  version: string
  nodeId: number
  brokerPort: number
  controllerPort: number
  /** "127.0.0.1:port" of the SASL_SSL listener, when `security.saslSsl` was given. */
  saslSslBootstrap?: string
  /** "127.0.0.1:port" of the SSL listener, when `security.ssl` was given. */
  sslBootstrap?: string
  /** The effective server.properties. */
  config: Readonly<Record<string, string>>
  /** PID of the running JVM (undefined once stopped). */
  pid(): number | undefined
  /** Idempotent: SIGTERM, SIGKILL after the grace period, then removes a temp dataDir unless SQUEEZE_KEEP_BROKER_DATA=1. */
  stop(): Promise<void>
  /** Stops the JVM (data dir kept) and starts it again on the same ports; resolves once it serves metadata again. */
  restart?(): Promise<void>
  /** Stops the JVM but keeps the data dir and ports, so `resume()` brings the same broker back (outage tests). */
  halt(): Promise<void>
  /** Like halt(), but SIGKILL at once: no controlled shutdown, no flush (crash tests). resume() brings it back. */
  kill(): Promise<void>
  /** Starts a halted or killed broker again; resolves once it serves metadata. */
  resume(): Promise<void>
}

// ---------------------------------------------------------------------------------------------------------------
// Safety nets. The library installs no process or signal handler: the process owner (a service's main, a test
// harness) decides the shutdown order, e.g. compare still reads from the broker after Ctrl-C to print its partial
// report. What the library does guarantee is that no JVM outlives this Node process (the watchdog below).

interface LiveBroker {
  child: ChildProcess
  watchdog?: ChildProcess
  /** Removed with the JVM on exit; unset for a caller's dir or SQUEEZE_KEEP_BROKER_DATA=1. */
  tempDir?: string
}
const live = new Set<LiveBroker>()
let killOnExitInstalled = false

function killAllNow(): void {
  for (const b of live) {
    try {
      b.child.kill('SIGKILL')
    } catch {
      /* already gone */
    }
    try {
      if (b.tempDir !== undefined) rmSync(b.tempDir, { recursive: true, force: true })
    } catch {
      /* best effort: the watchdog tries again once this process is gone */
    }
  }
  live.clear()
}

/**
 * For the process owner: SIGKILL every embedded JVM still running when this process exits (process.exit, an
 * uncaught error, the end of a test file). Idempotent. A watchdog still ends a JVM whose parent was killed.
 */
export function killEmbeddedBrokersOnExit(): void {
  if (killOnExitInstalled) return
  killOnExitInstalled = true
  process.on('exit', killAllNow)
}

/**
 * A tiny detached shell that SIGKILLs the JVM, and removes its temp data dir, if this Node process disappears
 * without stopping it (SIGKILLed by a test runner's timeout, a signal nobody handled). It ends by itself once the
 * JVM is gone; it never removes the dir while Node lives, since halt() keeps it for resume().
 */
function startWatchdog(jvmPid: number, tempDir: string | undefined): ChildProcess | undefined {
  try {
    const w = spawn(
      'bash',
      [
        '-c',
        'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 2; done; ' +
          'if ! kill -0 "$1" 2>/dev/null; then kill -9 "$2" 2>/dev/null; if [ -n "$3" ]; then rm -rf "$3"; fi; fi; exit 0',
        'squeeze-kafka-watchdog',
        String(process.pid),
        String(jvmPid),
        tempDir ?? ''
      ],
      { detached: true, stdio: 'ignore' }
    )
    w.on('error', () => {})
    w.unref()
    return w
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** A free TCP port on `host`, found by binding port 0. */
export async function reservePorts(host: string, count: number): Promise<number[]> {
  const servers: Server[] = []
  try {
    const ports: number[] = []
    for (let i = 0; i < count; i++) {
      const srv = createServer()
      servers.push(srv)
      await new Promise<void>((res, rej) => {
        srv.once('error', rej)
        srv.listen(0, host, () => res())
      })
      ports.push((srv.address() as AddressInfo).port)
    }
    return ports
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((res) => s.close(() => res()))))
  }
}

export function defaultServerProperties(args: {
  host: string
  brokerPort: number
  controllerPort: number
  kafkaLogDir: string
  quorum?: { nodeId: number; voters: string }
}): Record<string, string> {
  const { host, brokerPort, controllerPort, kafkaLogDir } = args
  const nodeId = args.quorum?.nodeId ?? DEFAULT_NODE_ID
  return {
    'process.roles': 'broker,controller',
    'node.id': String(nodeId),
    'controller.quorum.voters': args.quorum?.voters ?? `${nodeId}@${host}:${controllerPort}`,
    listeners: `PLAINTEXT://${host}:${brokerPort},CONTROLLER://${host}:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${host}:${brokerPort}`,
    'inter.broker.listener.name': 'PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': kafkaLogDir,
    // Codec comparison depends on the broker keeping the producer's batches as they are.
    'compression.type': 'producer',
    // Tests create their topics explicitly (with the configs they measure).
    'auto.create.topics.enable': 'false',
    'delete.topic.enable': 'true',
    'num.partitions': '1',
    'default.replication.factor': '1',
    'min.insync.replicas': '1',
    'log.segment.bytes': String(1024 * 1024 * 1024),
    // message.max.bytes: Kafka's default (1048588).
    'group.initial.rebalance.delay.ms': '0',
    // Lets crash tests use short consumer sessions, so a killed member's partitions move in seconds.
    'group.min.session.timeout.ms': '1000',
    // The new consumer protocol (KIP-848) sets sessions and heartbeats on the broker, not the client: 6 s
    // sessions and 1 s heartbeats (Kafka's 45 s and 5 s) let group tests see a killed member's hand-over in seconds.
    'group.consumer.min.session.timeout.ms': '1000',
    'group.consumer.session.timeout.ms': '6000',
    'group.consumer.min.heartbeat.interval.ms': '500',
    'group.consumer.heartbeat.interval.ms': '1000',
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '1',
    // Single-node transaction coordinator (exactly-once producers).
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'transaction.state.log.num.partitions': '1',
    // Kafka 4.x share groups' coordinator (KIP-932): defaults assume 3 brokers.
    'share.coordinator.state.topic.replication.factor': '1',
    'share.coordinator.state.topic.min.isr': '1',
    'share.coordinator.state.topic.num.partitions': '1'
  }
}

const SAFE_CREDENTIAL = /^[A-Za-z0-9._-]+$/

/** server.properties entries for the extra TLS listeners (added to the PLAINTEXT and CONTROLLER ones). */
export function securityServerProperties(base: Record<string, string>, host: string, security: KraftSecurityOptions, ports: { saslSsl?: number; ssl?: number }): Record<string, string> {
  const listeners: string[] = []
  const props: Record<string, string> = {
    'ssl.keystore.location': security.keystore.path,
    'ssl.keystore.password': security.keystore.password,
    'ssl.key.password': security.keystore.password,
    'ssl.keystore.type': security.keystore.type ?? 'PKCS12',
    'ssl.client.auth': 'none'
  }
  if (security.saslSsl !== undefined && ports.saslSsl !== undefined) {
    listeners.push(`SASL_SSL://${host}:${ports.saslSsl}`)
    const users = Object.entries(security.saslSsl.plainUsers ?? {})
    for (const [name, password] of users) checkCredential(name, password)
    props['sasl.enabled.mechanisms'] = 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512'
    props['listener.name.sasl_ssl.sasl.enabled.mechanisms'] = 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512'
    props['listener.name.sasl_ssl.plain.sasl.jaas.config'] =
      `org.apache.kafka.common.security.plain.PlainLoginModule required${users.map(([n, p]) => ` user_${n}="${p}"`).join('')};`
    props['listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config'] = 'org.apache.kafka.common.security.scram.ScramLoginModule required;'
    props['listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config'] = 'org.apache.kafka.common.security.scram.ScramLoginModule required;'
  }
  if (security.ssl !== undefined && ports.ssl !== undefined) {
    listeners.push(`SSL://${host}:${ports.ssl}`)
    if (security.ssl.clientCaFile !== undefined) {
      props['listener.name.ssl.ssl.client.auth'] = 'required'
      props['listener.name.ssl.ssl.truststore.type'] = 'PEM'
      props['listener.name.ssl.ssl.truststore.location'] = security.ssl.clientCaFile
    }
  }
  const protocolMap = [base['listener.security.protocol.map'] ?? '', ...listeners.map((l) => `${l.split(':')[0]}:${l.split(':')[0]}`)].filter((x) => x !== '')
  return {
    ...props,
    listeners: [base['listeners'], ...listeners].join(','),
    'advertised.listeners': [base['advertised.listeners'], ...listeners].join(','),
    'listener.security.protocol.map': protocolMap.join(',')
  }
}

/** StorageTool arguments creating the SCRAM users in the metadata log. */
export function scramFormatArgs(security: KraftSecurityOptions | undefined): string[] {
  return (security?.saslSsl?.scramUsers ?? []).flatMap((u) => {
    checkCredential(u.name, u.password)
    return ['--add-scram', `${u.mechanism}=[name=${u.name},password=${u.password}]`]
  })
}

function checkCredential(name: string, password: string): void {
  if (!SAFE_CREDENTIAL.test(name) || !SAFE_CREDENTIAL.test(password)) {
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `embedded broker user "${name}": names and passwords may hold only letters, digits, ".", "_" and "-"`)
  }
}

function propertiesText(props: Record<string, string>): string {
  const esc = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
  return (
    '# Generated by squeeze lib/embedded-broker/kraft-broker.ts\n' +
    Object.entries(props)
      .map(([k, v]) => `${esc(k)}=${esc(v)}`)
      .join('\n') +
    '\n'
  )
}

function fileTail(path: string, lines: number): string {
  try {
    const text = readFileSync(path, 'utf8')
    return text.trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return `(no ${path})`
  }
}

/** The first ERROR/FATAL lines of a log4j file: after a failed start the tail is mostly shutdown noise. */
function firstErrors(path: string, max: number): string {
  try {
    const lines = readFileSync(path, 'utf8').split('\n')
    const errors = lines.filter((l) => /^\[[^\]]+\] (ERROR|FATAL) /.test(l)).slice(0, max)
    return errors.length > 0 ? errors.join('\n') : '(none)'
  } catch {
    return `(no ${path})`
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise<boolean>((res) => {
    const t = setTimeout(() => {
      child.removeListener('exit', onExit)
      res(false)
    }, ms)
    const onExit = (): void => {
      clearTimeout(t)
      res(true)
    }
    child.once('exit', onExit)
  })
}

/** One metadata round trip with kafkajs and no retries of its own: the callers retry with lib/retry.ts. */
export async function describeClusterOnce(brokers: string[], timeouts: { connectionTimeout: number; requestTimeout: number }): Promise<{ clusterId: string; brokers: Array<{ nodeId: number }> }> {
  const admin = new Kafka({ clientId: 'squeeze-broker-probe', brokers, logLevel: logLevel.NOTHING, ...timeouts, retry: { retries: 0 } }).admin({ retry: { retries: 0 } })
  try {
    await admin.connect()
    return await admin.describeCluster()
  } finally {
    await admin.disconnect().catch(() => {})
  }
}

export async function startKraftBroker(opts: KraftBrokerOptions = {}): Promise<EmbeddedBroker> {
  const classpath = await ensureKafkaJars()
  const version = kafkaVersion()
  const host = opts.listeners?.host ?? '127.0.0.1'
  const heapMb = opts.heapMb ?? 512
  const startTimeoutMs = opts.startTimeoutMs ?? 90_000
  const stopTimeoutMs = opts.stopTimeoutMs ?? 20_000

  const ownsDir = opts.logDir === undefined
  const dataDir = ownsDir ? mkdtempSync(join(tmpdir(), 'squeeze-kafka-')) : resolve(opts.logDir as string)
  mkdirSync(dataDir, { recursive: true })
  const kafkaLogDir = join(dataDir, 'kafka-logs')
  mkdirSync(kafkaLogDir, { recursive: true })
  const logFile = join(dataDir, 'server.log')
  const jvmOut = join(dataDir, 'jvm.out')
  const propsFile = join(dataDir, 'server.properties')

  const removeDataDir = (): void => {
    if (ownsDir && process.env['SQUEEZE_KEEP_BROKER_DATA'] !== '1') rmSync(dataDir, { recursive: true, force: true })
  }

  let brokerPort: number
  let controllerPort: number
  let config: Record<string, string>
  let saslSslPort: number | undefined
  let sslPort: number | undefined
  try {
    const free = await reservePorts(host, 4)
    brokerPort = opts.listeners?.brokerPort ?? (free[0] as number)
    controllerPort = opts.listeners?.controllerPort ?? (free[1] as number)
    const base = defaultServerProperties({ host, brokerPort, controllerPort, kafkaLogDir, ...(opts.quorum === undefined ? {} : { quorum: opts.quorum }) })
    if (opts.security?.saslSsl !== undefined) saslSslPort = opts.security.saslSsl.port ?? (free[2] as number)
    if (opts.security?.ssl !== undefined) sslPort = opts.security.ssl.port ?? (free[3] as number)
    config = {
      ...base,
      ...(opts.security === undefined ? {} : securityServerProperties(base, host, opts.security, {
        ...(saslSslPort === undefined ? {} : { saslSsl: saslSslPort }), ...(sslPort === undefined ? {} : { ssl: sslPort })
      })),
      ...(opts.serverOverrides ?? {})
    }
    writeFileSync(propsFile, propertiesText(config))

    if (!existsSync(join(kafkaLogDir, 'meta.properties'))) {
      const fmt = await runKafkaJavaTool(
        KafkaMainClasses.STORAGE_TOOL,
        ['format', '-t', SQUEEZE_CLUSTER_ID, '-c', propsFile, '--ignore-formatted', ...scramFormatArgs(opts.security)],
        // Part of the start, and as slow as it on a loaded machine: three nodes format at once in a cluster.
        { timeoutMs: startTimeoutMs }
      )
      if (fmt.code !== 0) {
        throw new SqueezeError(
          ErrorCodes.BROKER_START,
          `kafka.tools.StorageTool format failed (exit ${fmt.code}):\n${(fmt.stdout + fmt.stderr).trim()}`
        )
      }
    }
  } catch (e) {
    removeDataDir()
    throw e
  }

  const bootstrap = `${host}:${brokerPort}`
  const nodeId = opts.quorum?.nodeId ?? DEFAULT_NODE_ID
  const jvmArgs = [
    `-Xms${Math.min(256, heapMb)}m`,
    `-Xmx${heapMb}m`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${kafkaLog4jConfig()}`,
    `-Dsqueeze.kafka.logFile=${logFile}`,
    ...(opts.jvmArgs ?? []),
    '-cp',
    classpath,
    KafkaMainClasses.BROKER,
    propsFile
  ]

  let current: LiveBroker | undefined

  const launch = (): LiveBroker => {
    const fd = openSync(jvmOut, 'a')
    let child: ChildProcess
    try {
      // Its own process group: a terminal's Ctrl-C goes to the owner, which decides when the broker stops.
      child = spawn(javaBinary(), jvmArgs, { cwd: dataDir, stdio: ['ignore', fd, fd], detached: true })
    } finally {
      closeSync(fd)
    }
    child.on('error', () => {}) // surfaced through waitReady (exitCode / spawn failure below)
    child.unref()
    const tempDir = ownsDir && process.env['SQUEEZE_KEEP_BROKER_DATA'] !== '1' ? dataDir : undefined
    const entry: LiveBroker = { child, ...(tempDir === undefined ? {} : { tempDir }) }
    if (child.pid !== undefined) {
      const w = startWatchdog(child.pid, tempDir)
      if (w !== undefined) entry.watchdog = w
    }
    live.add(entry)
    return entry
  }

  const failure = (why: string, cause?: unknown): SqueezeError =>
    new SqueezeError(
      ErrorCodes.BROKER_START,
      `embedded Kafka ${version} at ${bootstrap} ${why} (data dir ${dataDir}).\n` +
        `--- server.log (first errors) ---\n${firstErrors(logFile, 8)}\n` +
        `--- server.log (tail) ---\n${fileTail(logFile, 25)}\n--- jvm.out (tail) ---\n${fileTail(jvmOut, 20)}`,
      { retriable: true, cause }
    )

  const waitReady = async (entry: LiveBroker): Promise<void> => {
    let spawnError: Error | undefined
    entry.child.once('error', (e) => {
      spawnError = e
    })
    try {
      await retry(async () => {
        if (spawnError !== undefined) throw failure(`could not start ${javaBinary()}: ${spawnError.message}`, spawnError)
        const { exitCode, signalCode } = entry.child
        if (exitCode !== null || signalCode !== null) throw failure(`exited during startup (${exitCode ?? signalCode})`)
        const cluster = await describeClusterOnce([bootstrap], { connectionTimeout: 1000, requestTimeout: 3000 })
        // Another broker on a port we were told is free (a leftover) must not pass for ours.
        if (cluster.clusterId !== SQUEEZE_CLUSTER_ID || !cluster.brokers.some((b) => b.nodeId === nodeId)) throw new Error(`answered as cluster ${cluster.clusterId}`)
      }, { deadlineMs: startTimeoutMs, initialDelayMs: 250, maxDelayMs: 1000, shouldRetry: (err) => !(err instanceof SqueezeError && err.code === ErrorCodes.BROKER_START) })
    } catch (err) {
      if (err instanceof SqueezeError && err.code === ErrorCodes.BROKER_START) throw err
      throw failure(`did not answer a metadata request within ${startTimeoutMs} ms: ${errorMessage(err)}`, err)
    }
  }

  const terminate = async (entry: LiveBroker, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> => {
    const { child } = entry
    // pid undefined: spawn itself failed, there is nothing to signal or wait for.
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill(signal)
      if (!(await waitForExit(child, signal === 'SIGKILL' ? 10_000 : stopTimeoutMs))) {
        child.kill('SIGKILL')
        await waitForExit(child, 10_000)
      }
    }
    entry.watchdog?.kill('SIGKILL')
    live.delete(entry)
  }

  current = launch()
  try {
    await waitReady(current)
  } catch (e) {
    await terminate(current)
    removeDataDir()
    throw e
  }

  let stopping: Promise<void> | undefined
  let restarting: Promise<void> | undefined

  const broker: EmbeddedBroker = {
    bootstrap,
    dataDir,
    logFile,
    kafkaLogDir,
    clusterId: SQUEEZE_CLUSTER_ID,
    version,
    nodeId,
    brokerPort,
    controllerPort,
    ...(saslSslPort === undefined ? {} : { saslSslBootstrap: `${host}:${saslSslPort}` }),
    ...(sslPort === undefined ? {} : { sslBootstrap: `${host}:${sslPort}` }),
    config,
    pid: () => (current !== undefined && current.child.exitCode === null ? current.child.pid : undefined),
    stop(): Promise<void> {
      stopping ??= (async () => {
        await restarting?.catch(() => {})
        if (current !== undefined) await terminate(current)
        current = undefined
        removeDataDir()
      })()
      return stopping
    },
    restart(): Promise<void> {
      if (stopping !== undefined) {
        return Promise.reject(new SqueezeError(ErrorCodes.BROKER_START, `embedded Kafka at ${bootstrap} was stopped; cannot restart`))
      }
      restarting ??= (async () => {
        if (current !== undefined) await terminate(current)
        current = launch()
        try {
          await waitReady(current)
        } catch (e) {
          await terminate(current)
          throw e
        }
      })().finally(() => {
        restarting = undefined
      })
      return restarting
    },
    async halt(): Promise<void> {
      if (current !== undefined) await terminate(current)
      current = undefined
    },
    async kill(): Promise<void> {
      if (current !== undefined) await terminate(current, 'SIGKILL')
      current = undefined
    },
    async resume(): Promise<void> {
      if (stopping !== undefined) throw new SqueezeError(ErrorCodes.BROKER_START, `embedded Kafka at ${bootstrap} was stopped; cannot resume`)
      if (current !== undefined) return
      current = launch()
      try {
        await waitReady(current)
      } catch (e) {
        await terminate(current)
        current = undefined
        throw e
      }
    }
  }
  return broker
}
