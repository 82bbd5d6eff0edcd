/**
 * A real three-node Apache Kafka cluster (KRaft): every node is a combined broker + controller
 * (lib/embedded-broker/kraft-broker.ts) with its own ports and data dir, and the three form the controller quorum (3 voters), so
 * the cluster outlives any one node. Replicated defaults: replication.factor=3, min.insync.replicas=2, for
 * user topics and Kafka's own (__consumer_offsets, __transaction_state). Sized for a shared 2-core machine.
 *
 * Layout of `dataDir`: node-<id>/ per node, laid out as lib/embedded-broker/kraft-broker.ts says.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { reservePorts, startKraftBroker, type EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'

export interface KraftClusterOptions {
  /** Number of nodes (default 3); each is a voter. */
  nodes?: number
  /** Max heap per node in MiB (default 320: three JVMs share the machine with the tests). */
  heapMb?: number
  /** Extra or replacing server.properties entries, for every node. */
  serverOverrides?: Record<string, string>
  /** How long to wait for every node to serve metadata (default 180 s: three JVMs start on two cores). */
  startTimeoutMs?: number
}

export interface EmbeddedCluster {
  /** Every node's "127.0.0.1:port", in node id order. */
  brokers: string[]
  /** The nodes, in node id order (ids 1..n). */
  nodes: EmbeddedBroker[]
  /** controller.quorum.voters: `id@host:port,…`. */
  voters: string
  dataDir: string
  node(nodeId: number): EmbeddedBroker
  /** Idempotent: stops every node and removes the data dir unless SQUEEZE_KEEP_BROKER_DATA=1. */
  stop(): Promise<void>
}

/** What makes the cluster replicated, and quick to notice a dead node (its partitions move in seconds). */
export function clusterServerProperties(nodes: number): Record<string, string> {
  const rf = String(nodes)
  const minIsr = String(Math.min(2, nodes))
  return {
    'default.replication.factor': rf,
    'min.insync.replicas': minIsr,
    'offsets.topic.replication.factor': rf,
    'transaction.state.log.replication.factor': rf,
    'transaction.state.log.min.isr': minIsr,
    'share.coordinator.state.topic.replication.factor': rf,
    'share.coordinator.state.topic.min.isr': minIsr,
    // A SIGKILLed node is fenced (and leaves every ISR) after this long without a heartbeat; Kafka's 9 s
    // would stall acks=all writes for as long.
    'broker.session.timeout.ms': '4000',
    'broker.heartbeat.interval.ms': '500',
    // Two cores for three JVMs: fewer threads than Kafka's defaults, which assume a machine each.
    'num.network.threads': '2',
    'num.io.threads': '2',
    'num.replica.fetchers': '1',
    'background.threads': '2',
    'num.recovery.threads.per.data.dir': '1',
    'log.cleaner.threads': '1'
  }
}

/**
 * C1 only: a node's start (and every restart in the fault tests) costs markedly less CPU than with C2 on, which
 * matters most on a loaded machine; test traffic never needs C2's code.
 */
const CLUSTER_NODE_JVM_ARGS = ['-XX:TieredStopAtLevel=1']

export async function startKraftCluster(opts: KraftClusterOptions = {}): Promise<EmbeddedCluster> {
  const count = opts.nodes ?? 3
  if (!Number.isInteger(count) || count < 1)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `a cluster needs at least one node, not ${count}`)
  const host = '127.0.0.1'
  const dataDir = mkdtempSync(join(tmpdir(), 'squeeze-kafka-cluster-'))
  const removeDataDir = (): void => {
    if (process.env['SQUEEZE_KEEP_BROKER_DATA'] !== '1') rmSync(dataDir, { recursive: true, force: true })
  }
  const ports = await reservePorts(host, 2 * count)
  const ids = Array.from({ length: count }, (_, i) => i + 1)
  const voters = ids.map((id) => `${id}@${host}:${ports[2 * (id - 1) + 1] as number}`).join(',')
  const overrides = { ...clusterServerProperties(count), ...(opts.serverOverrides ?? {}) }
  // All at once: a node answers metadata only once a majority of voters elected a controller.
  const started = await Promise.allSettled(
    ids.map((id) => {
      const logDir = join(dataDir, `node-${id}`)
      mkdirSync(logDir, { recursive: true })
      return startKraftBroker({
        logDir,
        heapMb: opts.heapMb ?? 320,
        jvmArgs: CLUSTER_NODE_JVM_ARGS,
        startTimeoutMs: opts.startTimeoutMs ?? 180_000,
        listeners: {
          host,
          brokerPort: ports[2 * (id - 1)] as number,
          controllerPort: ports[2 * (id - 1) + 1] as number
        },
        quorum: { nodeId: id, voters },
        serverOverrides: overrides
      })
    })
  )
  const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed !== undefined) {
    await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)))
    removeDataDir()
    throw failed.reason
  }
  let stopping: Promise<void> | undefined
  return {
    brokers: nodes.map((n) => n.bootstrap),
    nodes,
    voters,
    dataDir,
    node(nodeId) {
      const found = nodes.find((n) => n.nodeId === nodeId)
      if (found === undefined)
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `no node ${nodeId} in this cluster (nodes ${ids.join(', ')})`)
      return found
    },
    stop() {
      stopping ??= (async () => {
        // SIGKILL: a controlled shutdown of the last nodes waits for a quorum that is already gone.
        await Promise.all(nodes.map((n) => n.kill().catch(() => undefined)))
        await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)))
        removeDataDir()
      })()
      return stopping
    }
  }
}
