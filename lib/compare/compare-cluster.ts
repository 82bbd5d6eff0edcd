import { acquireBroker, killEmbeddedBrokersOnExit } from '../embedded-broker/select-broker.js'
import { DEFAULT_CONNECTION, type KafkaConnectionConfig } from '../kafka/connection.js'
import type { Logger } from '../log/logger.js'

/** The cluster a compare runs against; stop() ends the broker the command started for it (none for a named one). */
export interface CompareCluster {
  readonly connection: KafkaConnectionConfig
  stop(): Promise<void>
}

/** The cluster named by --brokers, else a broker this command starts: testcontainers if Docker answers, else the JVM. */
export async function clusterFor(
  named: KafkaConnectionConfig | undefined,
  log: Logger,
  stderr: { write(text: string): unknown }
): Promise<CompareCluster> {
  if (named !== undefined) return { connection: named, stop: async () => undefined }
  stderr.write('no --brokers: starting Kafka (testcontainers if Docker answers, else the embedded JVM broker)...\n')
  // Ctrl-C only aborts the copy (the skeleton's shutdown): the broker serves the partial report, then stop() ends
  // it. A second Ctrl-C or the shutdown deadline exits at once, and this takes the JVM along.
  killEmbeddedBrokersOnExit()
  const broker = await acquireBroker((msg: string) => log.info(msg))
  return {
    connection: { ...DEFAULT_CONNECTION, brokers: broker.brokers, clientId: 'squeeze-compare' },
    stop: () => broker.stop()
  }
}
