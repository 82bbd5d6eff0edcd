/**
 * The embedded broker's configuration: its ports, server.properties (PLAINTEXT and controller listeners, the
 * TLS and SASL_SSL listeners, PLAIN users' JAAS) and the storage format that writes SCRAM users into the metadata
 * log. kraft-process.ts runs the JVM this configures.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { join } from 'node:path'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { KafkaMainClasses, runKafkaJavaTool } from './java-tools.js'

/** Fixed KRaft cluster id: base64url of the 16 bytes "squeeze-kafka-11" (a random one may start with '-'). */
export const SQUEEZE_CLUSTER_ID = 'c3F1ZWV6ZS1rYWZrYS0xMQ'
export const DEFAULT_NODE_ID = 1

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
export function securityServerProperties(
  base: Record<string, string>,
  host: string,
  security: KraftSecurityOptions,
  ports: { saslSsl?: number; ssl?: number }
): Record<string, string> {
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
    props['listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config'] =
      'org.apache.kafka.common.security.scram.ScramLoginModule required;'
    props['listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config'] =
      'org.apache.kafka.common.security.scram.ScramLoginModule required;'
  }
  if (security.ssl !== undefined && ports.ssl !== undefined) {
    listeners.push(`SSL://${host}:${ports.ssl}`)
    if (security.ssl.clientCaFile !== undefined) {
      props['listener.name.ssl.ssl.client.auth'] = 'required'
      props['listener.name.ssl.ssl.truststore.type'] = 'PEM'
      props['listener.name.ssl.ssl.truststore.location'] = security.ssl.clientCaFile
    }
  }
  const protocolMap = [
    base['listener.security.protocol.map'] ?? '',
    ...listeners.map((l) => `${l.split(':')[0]}:${l.split(':')[0]}`)
  ].filter((x) => x !== '')
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
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `embedded broker user "${name}": names and passwords may hold only letters, digits, ".", "_" and "-"`
    )
  }
}

export function propertiesText(props: Record<string, string>): string {
  const esc = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
  return (
    '# Generated by squeeze lib/embedded-broker/kraft-config.ts\n' +
    Object.entries(props)
      .map(([k, v]) => `${esc(k)}=${esc(v)}`)
      .join('\n') +
    '\n'
  )
}

/** The listeners a broker gets: its ports, and the server.properties that open them. */
export interface BrokerListeners {
  readonly brokerPort: number
  readonly controllerPort: number
  readonly saslSslPort?: number
  readonly sslPort?: number
  readonly config: Record<string, string>
}

/** Picks the ports (given ones, else free ones) and builds server.properties: defaults, security, then overrides. */
export async function brokerListeners(opts: {
  host: string
  kafkaLogDir: string
  listeners?: KraftListenerOptions
  security?: KraftSecurityOptions
  serverOverrides?: Record<string, string>
  quorum?: { nodeId: number; voters: string }
}): Promise<BrokerListeners> {
  const { host, kafkaLogDir, security } = opts
  const free = await reservePorts(host, 4)
  const brokerPort = opts.listeners?.brokerPort ?? (free[0] as number)
  const controllerPort = opts.listeners?.controllerPort ?? (free[1] as number)
  const quorum = opts.quorum === undefined ? {} : { quorum: opts.quorum }
  const base = defaultServerProperties({ host, brokerPort, controllerPort, kafkaLogDir, ...quorum })
  const saslSslPort = security?.saslSsl === undefined ? undefined : (security.saslSsl.port ?? (free[2] as number))
  const sslPort = security?.ssl === undefined ? undefined : (security.ssl.port ?? (free[3] as number))
  const ports = {
    ...(saslSslPort === undefined ? {} : { saslSsl: saslSslPort }),
    ...(sslPort === undefined ? {} : { ssl: sslPort })
  }
  const config = {
    ...base,
    ...(security === undefined ? {} : securityServerProperties(base, host, security, ports)),
    ...(opts.serverOverrides ?? {})
  }
  return {
    brokerPort,
    controllerPort,
    ...(saslSslPort === undefined ? {} : { saslSslPort }),
    ...(sslPort === undefined ? {} : { sslPort }),
    config
  }
}

/**
 * Writes server.properties to `propsFile` and formats `kafkaLogDir` once (StorageTool, with the SCRAM users), unless
 * it holds a formatted log already.
 */
export async function writeAndFormat(
  propsFile: string,
  config: Record<string, string>,
  kafkaLogDir: string,
  security: KraftSecurityOptions | undefined,
  timeoutMs: number
): Promise<void> {
  writeFileSync(propsFile, propertiesText(config))
  if (existsSync(join(kafkaLogDir, 'meta.properties'))) return
  const fmt = await runKafkaJavaTool(
    KafkaMainClasses.STORAGE_TOOL,
    ['format', '-t', SQUEEZE_CLUSTER_ID, '-c', propsFile, '--ignore-formatted', ...scramFormatArgs(security)],
    // Part of the start, and as slow as it on a loaded machine: three nodes format at once in a cluster.
    { timeoutMs }
  )
  if (fmt.code !== 0) {
    throw new SqueezeError(
      ErrorCodes.BROKER_START,
      `kafka.tools.StorageTool format failed (exit ${fmt.code}):\n${(fmt.stdout + fmt.stderr).trim()}`
    )
  }
}
