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
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ensureKafkaJars, kafkaLog4jConfig, kafkaVersion } from './kafka-jars.js'
import { KafkaMainClasses } from './java-tools.js'
import {
  brokerListeners,
  DEFAULT_NODE_ID,
  SQUEEZE_CLUSTER_ID,
  writeAndFormat,
  type KraftListenerOptions,
  type KraftSecurityOptions
} from './kraft-config.js'
import { BrokerProcess, removeOwnedDir } from './kraft-process.js'

export {
  SQUEEZE_CLUSTER_ID,
  defaultServerProperties,
  reservePorts,
  scramFormatArgs,
  securityServerProperties,
  type KraftListenerOptions,
  type KraftSecurityOptions,
  type ScramMechanism
} from './kraft-config.js'
export { describeClusterOnce, killEmbeddedBrokersOnExit } from './kraft-process.js'

export interface KraftBrokerOptions {
  /**
   * Data directory (config, logs, partitions). Default: a fresh temp dir, removed by stop(). A given dir is never
   * removed.
   */
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
  /**
   * Idempotent: SIGTERM, SIGKILL after the grace period, then removes a temp dataDir unless
   * SQUEEZE_KEEP_BROKER_DATA=1.
   */
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

/**
 * The JVM's options: heap, G1 with short pauses, log4j writing server.log, then the caller's, then the main class.
 * Regions of 4 MiB: G1 allocates an object of half a region or more as humongous, straight into the old generation,
 * and each such allocation can start a concurrent marking cycle. At this heap's default region (1 MiB) every
 * produce request near max.request.size (1 MiB) is humongous, and the broker spends much of its CPU marking
 * (docs/design.md, "Broker behaviour worth knowing").
 */
function jvmArguments(opts: KraftBrokerOptions, classpath: string, logFile: string, propsFile: string): string[] {
  const heapMb = opts.heapMb ?? 512
  return [
    `-Xms${Math.min(256, heapMb)}m`,
    `-Xmx${heapMb}m`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:G1HeapRegionSize=4m',
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
}

/** Starts a broker as the options say and resolves once it serves metadata (see kraft-config.ts, kraft-process.ts). */
export async function startKraftBroker(opts: KraftBrokerOptions = {}): Promise<EmbeddedBroker> {
  const classpath = await ensureKafkaJars()
  const host = opts.listeners?.host ?? '127.0.0.1'
  const startTimeoutMs = opts.startTimeoutMs ?? 90_000
  const ownsDir = opts.logDir === undefined
  const dataDir = ownsDir ? mkdtempSync(join(tmpdir(), 'squeeze-kafka-')) : resolve(opts.logDir as string)
  const kafkaLogDir = join(dataDir, 'kafka-logs')
  mkdirSync(kafkaLogDir, { recursive: true })
  const logFile = join(dataDir, 'server.log')
  const propsFile = join(dataDir, 'server.properties')

  let listeners: Awaited<ReturnType<typeof brokerListeners>>
  try {
    listeners = await brokerListeners({
      host,
      kafkaLogDir,
      ...(opts.listeners === undefined ? {} : { listeners: opts.listeners }),
      ...(opts.security === undefined ? {} : { security: opts.security }),
      ...(opts.serverOverrides === undefined ? {} : { serverOverrides: opts.serverOverrides }),
      ...(opts.quorum === undefined ? {} : { quorum: opts.quorum })
    })
    await writeAndFormat(propsFile, listeners.config, kafkaLogDir, opts.security, startTimeoutMs)
  } catch (e) {
    removeOwnedDir(dataDir, ownsDir)
    throw e
  }

  const { brokerPort, controllerPort, saslSslPort, sslPort, config } = listeners
  const bootstrap = `${host}:${brokerPort}`
  const nodeId = opts.quorum?.nodeId ?? DEFAULT_NODE_ID
  const version = kafkaVersion()
  const jvm = new BrokerProcess({
    jvmArgs: jvmArguments(opts, classpath, logFile, propsFile),
    dataDir,
    ownsDir,
    logFile,
    jvmOut: join(dataDir, 'jvm.out'),
    bootstrap,
    nodeId,
    version,
    startTimeoutMs,
    stopTimeoutMs: opts.stopTimeoutMs ?? 20_000
  })
  await jvm.start()

  return {
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
    pid: () => jvm.pid(),
    stop: () => jvm.stop(),
    restart: () => jvm.restart(),
    halt: () => jvm.halt(),
    kill: () => jvm.halt('SIGKILL'),
    resume: () => jvm.resume()
  }
}
