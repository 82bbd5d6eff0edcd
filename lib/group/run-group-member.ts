import type { PartitionReader, ReaderHandlers } from '../consumer/partition-reader.js'
import type { ConsumerProperties } from '../config/consumer-properties.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import { GroupCoordinator } from './coordinator.js'
import type { GroupMetricsSink } from '../metrics/consumer-metrics.js'
import { GroupReader } from './group-reader.js'
import { chooseProtocol, refuseForeignGroup } from './member.js'

/** The Java client's defaults: auto.commit.interval.ms, max.poll.interval.ms (the rebalance timeout), and the classic session and heartbeat. */
const DEFAULT_COMMIT_INTERVAL_MS = 5000
const DEFAULT_REBALANCE_TIMEOUT_MS = 300_000
const DEFAULT_SESSION_TIMEOUT_MS = 45_000
const DEFAULT_HEARTBEAT_INTERVAL_MS = 3000

/**
 * Reads the topics as a member of the group until `signal` aborts (or, without --follow, until the member's
 * partitions are read to their end), under the protocol -X group.protocol picks: the new one (KIP-848) by
 * default where the coordinator serves it, as the Java client does.
 */
export async function runGroupMember(
  config: {
    groupId: string
    topics: readonly string[]
    properties: ConsumerProperties
    /** Refuse the group if any active member has another client id (refuseForeignGroup); undefined: join any. */
    ownClientId: string | undefined
  },
  deps: {
    cluster: KafkajsCluster
    reader: PartitionReader
    log: Logger
    metrics?: GroupMetricsSink
    /** See GroupReaderDeps.settle. */
    settle?: () => Promise<void>
  },
  handlers: ReaderHandlers,
  signal?: AbortSignal
): Promise<void> {
  const coordinator = new GroupCoordinator(deps.cluster, config.groupId)
  if (config.ownClientId !== undefined) await refuseForeignGroup(coordinator, config.groupId, config.ownClientId)
  const protocol = await chooseProtocol(coordinator, config.properties['group.protocol'])
  deps.log.info({ groupId: config.groupId, protocol }, 'joining the group')
  const commitIntervalMs = config.properties['auto.commit.interval.ms'] ?? DEFAULT_COMMIT_INTERVAL_MS
  const rebalanceTimeoutMs = config.properties['max.poll.interval.ms'] ?? DEFAULT_REBALANCE_TIMEOUT_MS
  const sessionTimeoutMs = config.properties['session.timeout.ms'] ?? DEFAULT_SESSION_TIMEOUT_MS
  const heartbeatIntervalMs = config.properties['heartbeat.interval.ms'] ?? DEFAULT_HEARTBEAT_INTERVAL_MS
  const group = new GroupReader(
    {
      groupId: config.groupId,
      topics: config.topics,
      protocol,
      commitIntervalMs,
      rebalanceTimeoutMs,
      sessionTimeoutMs,
      heartbeatIntervalMs
    },
    {
      reader: deps.reader,
      coordinator,
      cluster: deps.cluster,
      log: deps.log,
      ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
      ...(deps.settle === undefined ? {} : { settle: deps.settle })
    }
  )
  await group.run(handlers, signal)
}
