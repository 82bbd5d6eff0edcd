// kafkajs does not export the layers squeeze builds on (lib/kafka/kafkajs-internals.ts). After a kafkajs
// upgrade this test is the one that fails if any function or field squeeze calls moved, with the list of what.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import {
  encodedPayload,
  encodedPayloadWithRoom,
  FRAMING_ROOM_BYTES,
  pendingCheckDelayMs,
  RequestQueue
} from '../../../lib/kafka/kafkajs-internals.js'
import { kafkaError } from '../../../lib/kafka/error-codes.js'

const require = createRequire(import.meta.url)

/** Each internal module squeeze requires or reaches through a cluster, and the methods it calls on its instances. */
const PROTOTYPES: Readonly<Record<string, readonly string[]>> = {
  'kafkajs/src/cluster': [
    'connect',
    'disconnect',
    'isConnected',
    'addTargetTopic',
    'addMultipleTargetTopics',
    'refreshMetadata',
    'findTopicPartitionMetadata',
    'findBroker',
    'findControllerBroker',
    'findGroupCoordinator'
  ],
  'kafkajs/src/broker': [
    'initProducerId',
    'addPartitionsToTxn',
    'addOffsetsToTxn',
    'offsetCommit',
    'endTxn',
    'joinGroup',
    'syncGroup',
    'heartbeat',
    'leaveGroup',
    'describeGroups',
    'isConnected'
  ],
  'kafkajs/src/network/connectionPool': ['send'],
  'kafkajs/src/network/requestQueue': ['push', 'checkPendingRequests', 'scheduleCheckPendingRequests', 'destroy'],
  'kafkajs/src/protocol/encoder': [
    'writeInt8',
    'writeInt16',
    'writeInt32',
    'writeInt64',
    'writeString',
    'writeBuffer',
    'writeArray',
    'writeEncoder',
    'size'
  ],
  'kafkajs/src/protocol/decoder': [
    'readInt8',
    'readInt16',
    'readInt32',
    'readInt64',
    'readString',
    'readBytes',
    'readArray',
    'canReadInt32'
  ]
}

function load(path: string): unknown {
  try {
    return require(path)
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err))
  }
}

function missingMethods(): string[] {
  const missing: string[] = []
  for (const [path, methods] of Object.entries(PROTOTYPES)) {
    const loaded = load(path)
    if (typeof loaded !== 'function') {
      missing.push(`${path}: not a class any more (${loaded instanceof Error ? loaded.message : typeof loaded})`)
      continue
    }
    const prototype = (loaded as { prototype: Record<string, unknown> }).prototype
    for (const method of methods)
      if (typeof prototype[method] !== 'function') missing.push(`${path}: no method ${method}()`)
  }
  return missing
}

describe('kafkajs internals squeeze relies on', () => {
  it('keep every method squeeze calls', () => {
    const missing = missingMethods()
    assert.deepEqual(missing, [], `kafkajs changed under lib/kafka/kafkajs-internals.ts:\n  ${missing.join('\n  ')}`)
  })

  it('keep the module exports and instance fields squeeze reads', () => {
    const loggers = load('kafkajs/src/loggers') as { createLogger?: unknown; LEVELS?: Record<string, unknown> }
    assert.equal(typeof loggers.createLogger, 'function', 'kafkajs/src/loggers: createLogger')
    for (const level of ['NOTHING', 'ERROR', 'WARN', 'INFO', 'DEBUG'])
      assert.equal(typeof loggers.LEVELS?.[level], 'number', `kafkajs/src/loggers: LEVELS.${level}`)
    const socketFactory = load('kafkajs/src/network/socketFactory')
    assert.equal(typeof socketFactory, 'function', 'kafkajs/src/network/socketFactory: a factory function')
    assert.equal(
      typeof (socketFactory as () => unknown)(),
      'function',
      'kafkajs/src/network/socketFactory(): returns the socket factory'
    )

    const Broker = load('kafkajs/src/broker') as new (options: Record<string, unknown>) => {
      nodeId: unknown
      connectionPool: unknown
    }
    const logger = (loggers.createLogger as (options: Record<string, unknown>) => unknown)({
      level: loggers.LEVELS?.NOTHING,
      logCreator: () => () => undefined
    })
    const pool = {}
    const versions = { 68: { minVersion: 0, maxVersion: 1 } }
    const broker = new Broker({ connectionPool: pool, logger, nodeId: 7, versions }) as unknown as {
      nodeId: unknown
      connectionPool: unknown
      versions: unknown
    }
    assert.equal(broker.nodeId, 7, 'kafkajs/src/broker: field nodeId')
    assert.equal(broker.versions, versions, 'kafkajs/src/broker: field versions (ApiVersions by api key)')
    assert.equal(broker.connectionPool, pool, 'kafkajs/src/broker: field connectionPool')

    const Decoder = load('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => {
      offset: unknown
      buffer: unknown
      readInt16(): number
    }
    const bytes = Buffer.from([0, 5, 1])
    const decoder = new Decoder(bytes)
    assert.equal(decoder.readInt16(), 5)
    assert.equal(decoder.offset, 2, 'kafkajs/src/protocol/decoder: field offset')
    assert.equal(decoder.buffer, bytes, 'kafkajs/src/protocol/decoder: field buffer')
  })

  it('frame a request body squeeze encoded itself, reading only its buf and buffer', async () => {
    const frame = load('kafkajs/src/protocol/request') as (args: Record<string, unknown>) => Promise<{ buffer: Buffer }>
    const body = Buffer.from('squeeze produce body')
    const framed = await frame({
      correlationId: 1,
      clientId: 'c',
      request: { apiKey: 0, apiVersion: 7, encode: async () => encodedPayload(body) }
    })
    assert.deepEqual(
      framed.buffer.subarray(framed.buffer.length - body.length),
      body,
      "kafkajs/src/protocol/request: appends encode()'s buffer as it is"
    )
  })

  it('frame a body with room in front into that room: the same bytes, with the body not copied (encoder fields buf and offset)', async () => {
    const frame = load('kafkajs/src/protocol/request') as (
      args: Record<string, unknown>
    ) => Promise<{ buffer: Buffer; size(): number }>
    const body = Buffer.from('squeeze produce body '.repeat(100))
    const withRoom = Buffer.alloc(FRAMING_ROOM_BYTES + body.length)
    body.copy(withRoom, FRAMING_ROOM_BYTES)
    const request = (encode: () => Promise<unknown>): Record<string, unknown> => ({
      correlationId: 9,
      clientId: 'squeeze-test',
      request: { apiKey: 0, apiVersion: 7, encode }
    })
    const copied = await frame(request(async () => encodedPayload(body)))
    const inPlace = await frame(request(async () => encodedPayloadWithRoom(withRoom)))
    assert.deepEqual(inPlace.buffer, copied.buffer)
    assert.equal(inPlace.size(), copied.size())
    assert.equal(inPlace.buffer.buffer, withRoom.buffer, "framed in the body's own buffer")
    // A client id longer than the room falls back to kafkajs's own copy.
    const long = await frame({
      ...request(async () => encodedPayloadWithRoom(Buffer.concat([Buffer.alloc(FRAMING_ROOM_BYTES), body]))),
      clientId: 'c'.repeat(FRAMING_ROOM_BYTES)
    })
    assert.deepEqual(long.buffer.subarray(long.buffer.length - body.length), body)
    assert.equal(long.buffer.readInt32BE(0), long.buffer.length - 4)
  })

  it("classify protocol errors as squeeze's own table does (kafkajs retries by its table inside the cluster layer)", () => {
    const table = (
      load('kafkajs/src/protocol/error') as { errorCodes: Array<{ code: number; type: string; retriable: boolean }> }
    ).errorCodes
    const differences = table
      .filter((e) => kafkaError(e.code).type !== e.type || kafkaError(e.code).retriable !== e.retriable)
      .map(
        (e) =>
          `${e.code}: kafkajs ${e.type} retriable=${e.retriable}, lib/kafka/error-codes.ts ${kafkaError(e.code).type} retriable=${kafkaError(e.code).retriable}`
      )
    assert.deepEqual(differences, [], `kafkajs's error table changed:\n  ${differences.join('\n  ')}`)
  })

  it("look at a request queue's pending requests only when some wait, after any throttle", () => {
    const now = 1_796_057_535_225
    assert.equal(pendingCheckDelayMs(0, -1, now), undefined, 'never throttled, nothing pending: no timer')
    assert.equal(
      pendingCheckDelayMs(0, now + 500, now),
      undefined,
      'throttled, nothing pending: push() schedules when it queues'
    )
    assert.equal(pendingCheckDelayMs(2, now + 500, now), 500, 'pending while throttled: when the throttle ends')
    assert.equal(pendingCheckDelayMs(2, -1, now), 10, "pending, unthrottled (in-flight limit): kafkajs's 10 ms recheck")
    assert.equal(pendingCheckDelayMs(2, now, now), 10, 'a throttle ending now is not a zero-delay timer')
  })

  it('leave an idle request queue without a timer, and still send a request queued behind a throttle', async (t) => {
    const loggers = load('kafkajs/src/loggers') as {
      createLogger(options: Record<string, unknown>): unknown
      LEVELS: Record<string, number>
    }
    const logger = loggers.createLogger({ level: loggers.LEVELS.NOTHING, logCreator: () => () => undefined })
    const queue = new RequestQueue({
      maxInFlightRequests: null,
      requestTimeout: 30000,
      enforceRequestTimeout: false,
      clientId: 'c',
      broker: 'b',
      logger
    })
    t.after(() => (queue as unknown as { destroy(): void }).destroy())
    assert.equal(
      queue.throttledUntil,
      -1,
      'kafkajs/src/network/requestQueue: field throttledUntil starts unthrottled at -1'
    )
    // What every response does (fulfillRequest): before, this armed a timer of -1.8e12 ms that re-armed itself every 1 ms.
    queue.checkPendingRequests()
    assert.equal(queue.throttleCheckTimeoutId, null)

    queue.throttledUntil = Date.now() + 20
    const sent = new Promise<void>((resolve) => {
      const push = (queue as unknown as { push(request: Record<string, unknown>): void }).push.bind(queue)
      push({
        entry: { correlationId: 1, resolve: () => undefined, reject: () => undefined },
        expectResponse: false,
        sendRequest: resolve
      })
    })
    assert.equal(queue.pending.length, 1, 'kafkajs/src/network/requestQueue: field pending holds the throttled request')
    assert.notEqual(queue.throttleCheckTimeoutId, null, 'a queued request arms the check')
    await sent
    assert.equal(queue.pending.length, 0)
  })

  it('are those of the exact kafkajs version package.json pins', () => {
    const pinned = (
      JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
        dependencies: Record<string, string>
      }
    ).dependencies.kafkajs
    assert.match(
      pinned ?? '',
      /^\d+\.\d+\.\d+$/,
      'kafkajs must be pinned exactly: its internals are not covered by semver'
    )
    assert.equal((load('kafkajs/package.json') as { version: string }).version, pinned)
  })
})
