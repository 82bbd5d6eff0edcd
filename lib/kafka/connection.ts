import type { ConnectionOptions } from 'node:tls'
import type { Kafka, SASLOptions } from 'kafkajs'
import type { Logger } from '../log/logger.js'
import { Cluster, createKafkajsLogger, defaultSocketFactory, KAFKAJS_LOG_LEVELS, kafkajsClientClass, type KafkajsCluster, type KafkajsLogCreator } from './kafkajs-internals.js'

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

const PINO_LEVEL: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [KAFKAJS_LOG_LEVELS.ERROR]: 'error',
  [KAFKAJS_LOG_LEVELS.WARN]: 'warn',
  [KAFKAJS_LOG_LEVELS.INFO]: 'info',
  [KAFKAJS_LOG_LEVELS.DEBUG]: 'debug'
}

/**
 * Error responses kafkajs logs at ERROR and then retries. Besides the group coordinator's: a topic created a moment
 * ago answers "does not host this topic-partition" or "no leader" to metadata until its leader is known, and a moved
 * leader answers "not the leader". When the retries run out, squeeze's caller reports it in its own words (a missing
 * topic is one clear error), so the operator sees each problem once, not as ERROR lines it recovered from.
 */
const RETRIED_RESPONSES = /coordinator is loading|coordinator is not available|not the correct coordinator|rebalanc|does not host this topic-partition|no leader for this topic-partition|not the leader for that topic-partition/i

/** Routes kafkajs's own log lines into pino; kafkajs's info chatter is demoted to debug. */
export function kafkajsLogCreator(log: Logger): KafkajsLogCreator {
  return () => ({ namespace, level, log: entry }) => {
    const { message, ...rest } = entry
    // kafkajs logs every error response at ERROR, even those it (or squeeze) retries, such as a fresh
    // cluster's "coordinator is loading": those are not the operator's problem, so they go to debug.
    const retried = typeof rest.error === 'string' && RETRIED_RESPONSES.test(rest.error)
    const pinoLevel = level === KAFKAJS_LOG_LEVELS.INFO || retried ? 'debug' : PINO_LEVEL[level] ?? 'debug'
    log[pinoLevel]({ kafkajs: { namespace, ...rest } }, String(message))
  }
}

/** A kafkajs client for admin and group-consumer work. */
export function createKafkaClient(config: KafkaConnectionConfig, log: Logger): Kafka {
  const Kafka = kafkajsClientClass()
  return new Kafka({
    brokers: [...config.brokers],
    clientId: config.clientId,
    ...(config.ssl !== undefined ? { ssl: config.ssl } : {}),
    ...(config.sasl !== undefined ? { sasl: config.sasl } : {}),
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    logLevel: KAFKAJS_LOG_LEVELS.WARN,
    logCreator: kafkajsLogCreator(log),
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
  return new Cluster({
    logger,
    brokers: [...config.brokers],
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
    socketFactory: defaultSocketFactory(),
    offsets: new Map()
  })
}
