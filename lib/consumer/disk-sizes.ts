import { errorMessage } from '../errors.js'
import { bytesAllReplicas, describeLogDirs } from '../kafka/describe-log-dirs.js'
import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import type { Logger } from '../log/logger.js'
import type { TopicMeasurement } from './measure-topics.js'

/**
 * Sets each measurement's bytes on disk, every replica counted, from DescribeLogDirs. A cluster that does not answer
 * it (no Describe on the cluster) leaves them unset with a warning: the report then shows fetched bytes only.
 */
export async function addDiskBytes(
  cluster: KafkajsCluster,
  topics: readonly string[],
  results: readonly TopicMeasurement[],
  log: Logger
): Promise<void> {
  try {
    const sizes = await describeLogDirs(cluster, topics)
    for (const m of results) m.diskBytes = bytesAllReplicas(sizes.filter((s) => s.topic === m.topic))
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'cannot read on-disk sizes (DescribeLogDirs); reporting fetched bytes only')
  }
}
