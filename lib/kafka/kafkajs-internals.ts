// kafkajs does not export its cluster, broker and protocol layers, but they are plain CommonJS files in the
// package. squeeze reaches them here, and only here, so a kafkajs upgrade has one file to check. They carry
// metadata, connection pooling, SASL/TLS and request framing; squeeze brings its own record batches.
// package.json pins kafkajs exactly, and test/lib/kafka/kafkajs-internals.test.ts checks every function and
// field used here: add to its lists whatever new internal this file starts to use.
import { createRequire } from 'node:module'
import type { ISocketFactory, Kafka } from 'kafkajs'

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
  readonly [FRAMING_ROOM]?: FramingRoom
}

const FRAMING_ROOM: unique symbol = Symbol('squeeze.framingRoom')

/** A body at `start`..`end` of `whole`, with the bytes before `start` free for the framing. */
interface FramingRoom {
  readonly whole: Buffer
  readonly start: number
  readonly end: number
}

/** Room that a request's framing fits in: size, api key and version, correlation id, a client id of up to 240 bytes. */
export const FRAMING_ROOM_BYTES = 256

/**
 * A body written into `whole` from FRAMING_ROOM_BYTES on: kafkajs's framing (size, header) is then written into
 * the room in front of it, and the buffer is sent as it is. Otherwise each request's bytes went into a zero-filled
 * power-of-two buffer and were copied twice, a visible share of a fanned-out copier's CPU.
 */
export function encodedPayloadWithRoom(whole: Buffer): EncodedPayload {
  frameInPlace()
  const body = whole.subarray(FRAMING_ROOM_BYTES)
  return { buf: body, buffer: body, [FRAMING_ROOM]: { whole, start: FRAMING_ROOM_BYTES, end: whole.length } }
}

interface EncoderState {
  buf: Buffer
  offset: number
  [FRAMING_ROOM]?: FramingRoom
}

let framingInPlace = false

/**
 * kafkajs frames a request as new Encoder().(header).writeEncoder(body), then new Encoder().writeInt32(size)
 * .writeEncoder(that). For a body with room in front, writeEncoder puts what the encoder holds so far right
 * before the body and takes the body's buffer over, with the room left; anything else is written as kafkajs does.
 */
function frameInPlace(): void {
  if (framingInPlace) return
  framingInPlace = true
  const prototype = (Encoder as unknown as { prototype: { writeEncoder(this: EncoderState, value: unknown): unknown } })
    .prototype
  const writeEncoder = prototype.writeEncoder
  prototype.writeEncoder = function (this: EncoderState, value: unknown): unknown {
    const room = (value as { [FRAMING_ROOM]?: FramingRoom } | null | undefined)?.[FRAMING_ROOM]
    if (room === undefined || this.offset > room.start) return writeEncoder.call(this, value)
    const start = room.start - this.offset
    this.buf.copy(room.whole, start, 0, this.offset)
    this.buf = room.whole.subarray(start, room.end)
    this.offset = room.end - start
    this[FRAMING_ROOM] = { whole: room.whole, start, end: room.end }
    return this
  }
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
  connectionPool: {
    send<T>(args: { request: ProtocolRequest; response: ProtocolResponse<T>; requestTimeout?: number }): Promise<T>
  }
  initProducerId(args: {
    transactionalId?: string
    transactionTimeout?: number
  }): Promise<{ producerId: string; producerEpoch: number }>
  addPartitionsToTxn(args: {
    transactionalId: string
    producerId: string
    producerEpoch: number
    topics: Array<{ topic: string; partitions: number[] }>
  }): Promise<unknown>
  addOffsetsToTxn(args: {
    transactionalId: string
    producerId: string
    producerEpoch: number
    groupId: string
  }): Promise<unknown>
  offsetCommit(args: {
    groupId: string
    groupGenerationId: number
    memberId: string
    topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>
  }): Promise<unknown>
  endTxn(args: {
    transactionalId: string
    producerId: string
    producerEpoch: number
    transactionResult: boolean
  }): Promise<unknown>
  isConnected(): boolean
}

/** The classic group calls of a kafkajs broker (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), kafkajs-encoded. */
export interface KafkajsClassicGroupCalls {
  joinGroup(args: {
    groupId: string
    sessionTimeout: number
    rebalanceTimeout: number
    memberId: string
    groupProtocols: Array<{ name: string; metadata: Buffer }>
  }): Promise<{
    generationId: number
    leaderId: string
    memberId: string
    members: Array<{ memberId: string; memberMetadata: Buffer }>
  }>
  syncGroup(args: {
    groupId: string
    generationId: number
    memberId: string
    groupAssignment: Array<{ memberId: string; memberAssignment: Buffer }>
  }): Promise<{ memberAssignment: Buffer }>
  heartbeat(args: { groupId: string; groupGenerationId: number; memberId: string }): Promise<unknown>
  leaveGroup(args: { groupId: string; memberId: string }): Promise<unknown>
}

/** DescribeGroups, kafkajs-encoded: a classic group's state and members; a KIP-848 group reads as Dead with none. */
export interface KafkajsGroupDescriber {
  describeGroups(args: { groupIds: string[] }): Promise<{
    groups: Array<{
      groupId: string
      state: string
      members: Array<{ memberId: string; clientId: string; clientHost: string }>
    }>
  }>
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
export const defaultSocketFactory = require('kafkajs/src/network/socketFactory') as () => ISocketFactory
const loggers = require('kafkajs/src/loggers') as {
  createLogger(args: { level: number; logCreator: KafkajsLogCreator }): unknown
  LEVELS: { NOTHING: number; ERROR: number; WARN: number; INFO: number; DEBUG: number }
}

export type KafkajsLogCreator = (
  level: number
) => (entry: { namespace: string; level: number; label: string; log: Record<string, unknown> }) => void

export const KAFKAJS_LOG_LEVELS = loggers.LEVELS
export const createKafkajsLogger = loggers.createLogger

/** The fields of kafkajs's per-connection request queue that its pending-request check reads. */
export interface KafkajsRequestQueue {
  pending: unknown[]
  /** ms since the epoch; -1 until a broker throttles the connection. */
  throttledUntil: number
  throttleCheckTimeoutId: NodeJS.Timeout | null
  checkPendingRequests(): void
  scheduleCheckPendingRequests(): void
}

export const RequestQueue = require('kafkajs/src/network/requestQueue') as new (
  options: Record<string, unknown>
) => KafkajsRequestQueue

/** kafkajs's CHECK_PENDING_REQUESTS_INTERVAL: how often a queue holding requests looks again once unthrottled. */
const PENDING_RECHECK_MS = 10

/**
 * When a request queue should next look at its pending requests: undefined when none wait, since push() schedules
 * a look whenever it queues one. kafkajs 2.2.4 schedules `throttledUntil - now` even with
 * nothing pending: after every response, on every connection, a timer of about -1.8e12 ms, which Node runs 1 ms
 * later (a TimeoutNegativeWarning on Node 24) and which schedules the next one, a 1 ms loop for the connection's life.
 */
export function pendingCheckDelayMs(pendingCount: number, throttledUntil: number, now: number): number | undefined {
  if (pendingCount === 0) return undefined
  const untilUnthrottled = throttledUntil - now
  return untilUnthrottled > 0 ? untilUnthrottled : PENDING_RECHECK_MS
}

RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(
  this: KafkajsRequestQueue
): void {
  if (this.throttleCheckTimeoutId) return
  const delayMs = pendingCheckDelayMs(this.pending.length, this.throttledUntil, Date.now())
  if (delayMs === undefined) return
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null
    this.checkPendingRequests()
  }, delayMs)
}

/**
 * kafkajs's client class, loaded on first use: its index loads the consumer, admin and producer on top of the
 * cluster, which a producer alone never uses (0.03 CPU s of its start-up).
 */
export function kafkajsClientClass(): typeof Kafka {
  return (require('kafkajs') as { Kafka: typeof Kafka }).Kafka
}

/** The consumer still imports the error table from here; it lives in error-codes.ts, squeeze's own copy. */
export { kafkaError as protocolError } from './error-codes.js'
