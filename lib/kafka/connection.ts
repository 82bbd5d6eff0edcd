import type { ConnectionOptions } from 'node:tls'
import type { Kafka, SASLOptions } from 'kafkajs'
import type { Logger } from '../log/logger.js'
import {
  Cluster,
  createKafkajsLogger,
  KAFKAJS_LOG_LEVELS,
  kafkajsClientClass,
  type KafkajsCluster,
  type KafkajsLogCreator
} from './kafkajs-internals.js'
import { seedBrokers } from './seed-brokers.js'

/** How to reach a cluster; shared by every service. */
export interface KafkaConnectionConfig {
  readonly brokers: readonly string[]
  readonly clientId: string
  readonly ssl?: ConnectionOptions | boolean
  readonly sasl?: SASLOptions
  readonly connectionTimeoutMs: number
  readonly requestTimeoutMs: number
}

export const DEFAULT_CONNECTION: Omit<KafkaConnectionConfig, 'brokers'> = {
  clientId: 'squeeze',
  connectionTimeoutMs: 3000,
  requestTimeoutMs: 30000
}

/**
 * Routes kafkajs's own log lines into pino at debug. What they report reaches the operator as squeeze's own
 * one-line error once kafkajs gives up (an unreachable broker, refused credentials, a missing topic), and what it
 * retries and recovers from (a fresh topic's leader election, a loading coordinator, a dropped connection) is not
 * the operator's problem: at the default and warn levels neither adds a line of the library's words before squeeze's.
 */
export function kafkajsLogCreator(log: Logger): KafkajsLogCreator {
  return () =>
    ({ namespace, log: entry }) => {
      if (!log.isLevelEnabled('debug')) return
      const { message, ...rest } = entry
      log.debug({ kafkajs: { namespace, ...rest } }, String(message))
    }
}

/** A kafkajs client for admin and group-consumer work. */
export function createKafkaClient(config: KafkaConnectionConfig, log: Logger): Kafka {
  const Kafka = kafkajsClientClass()
  const { seeds, socketFactory } = seedBrokers(config.brokers)
  return new Kafka({
    brokers: seeds,
    clientId: config.clientId,
    ...(config.ssl !== undefined ? { ssl: config.ssl } : {}),
    ...(config.sasl !== undefined ? { sasl: config.sasl } : {}),
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    logLevel: KAFKAJS_LOG_LEVELS.WARN,
    logCreator: kafkajsLogCreator(log),
    socketFactory,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 }
  })
}

/**
 * A bare kafkajs cluster (metadata, broker connections, auth), for the producer and the measuring consumer,
 * which frame their own record batches. Its own retries are kept short: squeeze's callers retry with
 * their own deadlines (delivery.timeout.ms), so a broker outage does not hide inside kafkajs.
 */
export function createCluster(config: KafkaConnectionConfig, log: Logger): KafkajsCluster {
  const logger = createKafkajsLogger({ level: KAFKAJS_LOG_LEVELS.WARN, logCreator: kafkajsLogCreator(log) })
  const { seeds, socketFactory } = seedBrokers(config.brokers)
  return new Cluster({
    logger,
    brokers: seeds,
    clientId: config.clientId,
    ssl: config.ssl,
    sasl: config.sasl,
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    enforceRequestTimeout: true,
    metadataMaxAge: 300000,
    allowAutoTopicCreation: false,
    maxInFlightRequests: null,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 1000 },
    socketFactory,
    offsets: new Map()
  })
}
