// kafkajs does not export its cluster, broker and protocol layers, but they are plain CommonJS files in the
// package. squeeze reaches them here, and only here, so a kafkajs upgrade has one file to check. They carry
// metadata, connection pooling, SASL/TLS and request framing; squeeze brings its own record batches.
// package.json pins kafkajs exactly, and test/lib/kafka/kafkajs-internals.test.ts checks every function and
// field used here: add to its lists whatever new internal this file starts to use.
import { createRequire } from 'node:module'
import type { Kafka } from 'kafkajs'

const require = createRequire(import.meta.url)

export interface KafkajsEncoder {
  writeInt8(value: number): KafkajsEncoder
  writeInt16(value: number): KafkajsEncoder
  writeInt32(value: number): KafkajsEncoder
  writeInt64(value: bigint | number | string): KafkajsEncoder
  writeString(value: string | null): KafkajsEncoder
  writeBuffer(value: Buffer): KafkajsEncoder
  writeArray(values: KafkajsEncoder[]): KafkajsEncoder
  size(): number
}

export interface KafkajsDecoder {
  readInt8(): number
  readInt16(): number
  readInt32(): number
  readInt64(): { toString(): string }
  readString(): string
  readBytes(): Buffer
  readArray<T>(reader: (decoder: KafkajsDecoder) => T): T[]
  canReadInt32(): boolean
  offset: number
  buffer: Buffer
}

/**
 * A request body already laid out in one buffer. kafkajs's request framing reads only `buf` and `buffer` of
 * what encode() returns, so this skips its Encoder (a zero-filled power-of-two buffer and one more copy).
 */
export interface EncodedPayload {
  readonly buf: Buffer
  readonly buffer: Buffer
}

export function encodedPayload(body: Buffer): EncodedPayload {
  return { buf: body, buffer: body }
}

export interface ProtocolRequest {
  apiKey: number
  apiVersion: number
  apiName: string
  expectResponse: () => boolean
  encode: () => Promise<KafkajsEncoder | EncodedPayload>
}

export interface ProtocolResponse<T> {
  decode(raw: Buffer): Promise<T>
  parse(decoded: T): Promise<T>
}

export interface KafkajsBroker {
  nodeId: number
  /** ApiVersions' answer by api key, once connected. */
  versions?: Record<number, { minVersion: number; maxVersion: number }>
  connectionPool: { send<T>(args: { request: ProtocolRequest; response: ProtocolResponse<T>; requestTimeout?: number }): Promise<T> }
  initProducerId(args: { transactionalId?: string; transactionTimeout?: number }): Promise<{ producerId: string; producerEpoch: number }>
  addPartitionsToTxn(args: { transactionalId: string; producerId: string; producerEpoch: number; topics: Array<{ topic: string; partitions: number[] }> }): Promise<unknown>
  addOffsetsToTxn(args: { transactionalId: string; producerId: string; producerEpoch: number; groupId: string }): Promise<unknown>
  offsetCommit(args: { groupId: string; groupGenerationId: number; memberId: string; topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> }): Promise<unknown>
  endTxn(args: { transactionalId: string; producerId: string; producerEpoch: number; transactionResult: boolean }): Promise<unknown>
  isConnected(): boolean
}

/** The classic group calls of a kafkajs broker (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), kafkajs-encoded. */
export interface KafkajsClassicGroupCalls {
  joinGroup(args: { groupId: string; sessionTimeout: number; rebalanceTimeout: number; memberId: string; groupProtocols: Array<{ name: string; metadata: Buffer }> }): Promise<{ generationId: number; leaderId: string; memberId: string; members: Array<{ memberId: string; memberMetadata: Buffer }> }>
  syncGroup(args: { groupId: string; generationId: number; memberId: string; groupAssignment: Array<{ memberId: string; memberAssignment: Buffer }> }): Promise<{ memberAssignment: Buffer }>
  heartbeat(args: { groupId: string; groupGenerationId: number; memberId: string }): Promise<unknown>
  leaveGroup(args: { groupId: string; memberId: string }): Promise<unknown>
}

export interface PartitionMetadata {
  partitionId: number
  leader: number
  replicas: number[]
  isr: number[]
}

export interface KafkajsCluster {
  connect(): Promise<void>
  disconnect(): Promise<void>
  isConnected(): boolean
  addTargetTopic(topic: string): Promise<void>
  addMultipleTargetTopics(topics: string[]): Promise<void>
  refreshMetadata(): Promise<void>
  findTopicPartitionMetadata(topic: string): PartitionMetadata[]
  findBroker(args: { nodeId: number }): Promise<KafkajsBroker>
  findControllerBroker(): Promise<KafkajsBroker>
  findGroupCoordinator(args: { groupId: string; coordinatorType: number }): Promise<KafkajsBroker>
}

/** FindCoordinator key types. */
export const COORDINATOR_TYPES = { GROUP: 0, TRANSACTION: 1 } as const

export const Encoder = require('kafkajs/src/protocol/encoder') as new (initialSize?: number) => KafkajsEncoder
export const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkajsDecoder
export const Cluster = require('kafkajs/src/cluster') as new (options: Record<string, unknown>) => KafkajsCluster
export const defaultSocketFactory = require('kafkajs/src/network/socketFactory') as () => unknown
const loggers = require('kafkajs/src/loggers') as {
  createLogger(args: { level: number; logCreator: KafkajsLogCreator }): unknown
  LEVELS: { NOTHING: number; ERROR: number; WARN: number; INFO: number; DEBUG: number }
}

export type KafkajsLogCreator = (level: number) => (entry: { namespace: string; level: number; label: string; log: Record<string, unknown> }) => void

export const KAFKAJS_LOG_LEVELS = loggers.LEVELS
export const createKafkajsLogger = loggers.createLogger

/**
 * kafkajs's client class, loaded on first use: its index loads the consumer, admin and producer on top of the
 * cluster, which a producer alone never uses (0.03 CPU s of its start-up).
 */
export function kafkajsClientClass(): typeof Kafka {
  return (require('kafkajs') as { Kafka: typeof Kafka }).Kafka
}

/** The consumer still imports the error table from here; it lives in error-codes.ts, squeeze's own copy. */
export { kafkaError as protocolError } from './error-codes.js'
