import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import { decodeConsumerGroupDescribe } from '../../lib/kafka/consumer-group-describe.js'
import { decodeHeartbeatResponse } from '../../lib/kafka/consumer-group-heartbeat.js'
import { describeLogDirsRequest } from '../../lib/kafka/describe-log-dirs.js'
import { fetchRequest } from '../../lib/kafka/fetch-request.js'
import { FlexibleReader, FlexibleWriter } from '../../lib/kafka/flexible.js'
import { decodeOffsetCommitResponse } from '../../lib/kafka/offset-commit.js'
import { decodeOffsetFetchResponse } from '../../lib/kafka/offset-fetch.js'
import { produceRequest } from '../../lib/kafka/produce-request.js'
import { decodeTopicMetadata } from '../../lib/kafka/topic-ids.js'
import { bytesInput, FUZZ_RUNS, FUZZ_SEED, printTallies, type FuzzTally } from './fuzz-harness.js'
import { codecFor, seedBatches } from './fuzz-inputs.js'

const done: FuzzTally[] = []
after(() => printTallies('protocol responses', done))

/** Big-endian writers for the non-flexible responses (Fetch v4, Produce v7, DescribeLogDirs v1). */
const int16 = (v: number): Buffer => {
  const b = Buffer.alloc(2)
  b.writeInt16BE(v)
  return b
}
const int32 = (v: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeInt32BE(v)
  return b
}
const int64 = (v: number): Buffer => {
  const b = Buffer.alloc(8)
  b.writeBigInt64BE(BigInt(v))
  return b
}
const string = (s: string): Buffer => Buffer.concat([int16(Buffer.byteLength(s)), Buffer.from(s)])
const array = (items: readonly Buffer[]): Buffer => Buffer.concat([int32(items.length), ...items])

function fetchResponse(records: readonly Buffer[]): Buffer {
  const partition = (p: number, data: Buffer): Buffer =>
    Buffer.concat([
      int32(p),
      int16(0),
      int64(100 + p),
      int64(90 + p),
      array([Buffer.concat([int64(7), int64(3)])]),
      int32(data.length),
      data
    ])
  return Buffer.concat([
    int32(0),
    array([Buffer.concat([string('logs'), array(records.map((r, i) => partition(i, r)))])])
  ])
}

function produceResponse(partitions: number): Buffer {
  const partition = (p: number): Buffer => Buffer.concat([int32(p), int16(p % 2), int64(1000 * p), int64(-1), int64(0)])
  return Buffer.concat([
    array([Buffer.concat([string('logs'), array(Array.from({ length: partitions }, (_, p) => partition(p)))])]),
    int32(0)
  ])
}

function describeLogDirsResponse(partitions: number): Buffer {
  const partition = (p: number): Buffer => Buffer.concat([int32(p), int64(123_456 * (p + 1)), int64(0), Buffer.of(0)])
  const dir = Buffer.concat([
    int16(0),
    string('/var/lib/kafka'),
    array([Buffer.concat([string('logs'), array(Array.from({ length: partitions }, (_, p) => partition(p)))])])
  ])
  return Buffer.concat([int32(0), array([dir, dir])])
}

const TOPIC_ID = 'AAECAwQFBgcICQoLDA0ODw'
const CONSUMER_GROUP_DESCRIBE_RESPONSE =
  '000000000300000003673107537461626c65000000070000000708756e69666f726d03046d2d3100037231000000050c62696c6c696e67' +
  '2d6170700a2f31302e302e302e3702056c6f67730002000102030405060708090a0b0c0d0e0f056c6f677303000000000000000100000100' +
  '00046d2d3204692d3200000000050873717565657a650a2f31302e302e302e3801056c6f2e2a010002000102030405060708090a0b0c0d0e' +
  '0f056c6f6773030000000000000001000000800000000000452647726f7570206170702dc3a9206973206e6f74206120636f6e73756d6572' +
  '2067726f75702e076170702dc3a90100000000000000000101800000000000'

function metadataResponse(partitions: number): Buffer {
  const w = new FlexibleWriter()
  w.int32(0).compactArray([1, 2], (id) =>
    w
      .int32(id)
      .compactString('127.0.0.1')
      .int32(9092 + id)
      .compactString(null)
      .tags()
  )
  w.compactString('cluster').int32(1)
  w.compactArray(['logs', 'audit'], (name) => {
    w.int16(0).compactString(name).uuid(TOPIC_ID).bool(false)
    w.compactArray(
      Array.from({ length: partitions }, (_, p) => p),
      (p) => w.int16(0).int32(p).int32(1).int32(0).int32Array([1, 2]).int32Array([1, 2]).int32Array([]).tags()
    )
    w.int32(0).tags()
  })
  return w.tags().build()
}

function offsetCommitResponse(partitions: number): Buffer {
  const w = new FlexibleWriter()
  w.int32(0).compactArray(['logs'], (t) =>
    w
      .compactString(t)
      .compactArray(
        Array.from({ length: partitions }, (_, p) => p),
        (p) => w.int32(p).int16(0).tags()
      )
      .tags()
  )
  return w.tags().build()
}

function offsetFetchResponse(partitions: number): Buffer {
  const w = new FlexibleWriter()
  w.int32(0).compactArray(['group'], (g) => {
    w.compactString(g)
    w.compactArray(['logs'], (t) =>
      w
        .compactString(t)
        .compactArray(
          Array.from({ length: partitions }, (_, p) => p),
          (p) =>
            w
              .int32(p)
              .int64(50 * p)
              .int32(-1)
              .compactString(null)
              .int16(0)
              .tags()
        )
        .tags()
    )
    w.int16(0).tags()
  })
  return w.tags().build()
}

function heartbeatResponse(partitions: number): Buffer {
  const w = new FlexibleWriter()
  w.int32(0).int16(0).compactString(null).compactString('member-1').int32(3).int32(5000).int8(1)
  w.compactArray([TOPIC_ID], (id) =>
    w
      .uuid(id)
      .int32Array(Array.from({ length: partitions }, (_, p) => p))
      .tags()
  )
  return w.tags().tags().build()
}

/** A flexible response as flexibleRequest hands it over: its header's tagged fields first. */
function flexible<T>(decode: (r: FlexibleReader) => T): (raw: Buffer) => T {
  return (raw) => {
    const reader = new FlexibleReader(raw)
    reader.tags()
    return decode(reader)
  }
}
const withHeader = (body: Buffer): Buffer => Buffer.concat([Buffer.of(0), body])

const fetchDecode = fetchRequest({ maxWaitMs: 0, minBytes: 1, maxBytes: 1, isolationLevel: 1, partitions: [] }).response
const produceDecode = produceRequest({ acks: -1, timeoutMs: 1, transactionalId: null, batches: [] }).response
const logDirsDecode = describeLogDirsRequest(new Map()).response

/** Every item a decoder returns stands for at least one byte of input: none can be conjured from a count alone. */
function countOf(result: unknown): number {
  if (Array.isArray(result)) return result.length
  if (typeof result === 'object' && result !== null && 'offsets' in result)
    return (result as { offsets: unknown[] }).offsets.length
  if (typeof result === 'object' && result !== null && 'assignment' in result) {
    return ((result as { assignment: Array<{ partitions: number[] }> | null }).assignment ?? []).reduce(
      (n, t) => n + t.partitions.length + 1,
      0
    )
  }
  return 0
}

const TARGETS: ReadonlyArray<{ name: string; seeds: Buffer[]; decode: (raw: Buffer) => unknown }> = [
  {
    name: 'Fetch v4',
    seeds: [
      fetchResponse(seedBatches(codecFor('zstd:3'), 3)),
      fetchResponse([Buffer.alloc(0), ...seedBatches(codecFor('lz4:1'), 2)])
    ],
    decode: (raw) => fetchDecode.decode(raw)
  },
  { name: 'Produce v7', seeds: [produceResponse(1), produceResponse(4)], decode: (raw) => produceDecode.decode(raw) },
  {
    name: 'DescribeLogDirs v1',
    seeds: [describeLogDirsResponse(1), describeLogDirsResponse(3)],
    decode: (raw) => logDirsDecode.decode(raw)
  },
  {
    name: 'Metadata v12',
    seeds: [withHeader(metadataResponse(1)), withHeader(metadataResponse(3))],
    decode: flexible(decodeTopicMetadata)
  },
  {
    name: 'OffsetCommit',
    seeds: [withHeader(offsetCommitResponse(1)), withHeader(offsetCommitResponse(4))],
    decode: flexible(decodeOffsetCommitResponse)
  },
  {
    name: 'OffsetFetch v9',
    seeds: [withHeader(offsetFetchResponse(1)), withHeader(offsetFetchResponse(4))],
    decode: flexible(decodeOffsetFetchResponse)
  },
  {
    name: 'ConsumerGroupHeartbeat',
    seeds: [withHeader(heartbeatResponse(1)), withHeader(heartbeatResponse(4))],
    decode: flexible(decodeHeartbeatResponse)
  },
  {
    name: 'ConsumerGroupDescribe v0',
    // Kafka 4.1.1's own serialization (test/lib/kafka/group-requests.test.ts): a group of two members, one not found.
    seeds: [withHeader(Buffer.from(CONSUMER_GROUP_DESCRIBE_RESPONSE, 'hex'))],
    decode: flexible(decodeConsumerGroupDescribe)
  }
]

describe('fuzz: response decoders return what the bytes hold, or throw an Error; never hang, crash or conjure items', () => {
  for (const target of TARGETS) {
    it(`${target.name}: ${FUZZ_RUNS} mutated responses and random bytes`, async () => {
      const tally: FuzzTally = { target: target.name, runs: 0, accepted: 0, rejected: {}, slowestCallMs: 0 }
      // The seeds themselves decode: the mutations start from real responses.
      for (const seed of target.seeds) assert.ok(countOf(await target.decode(seed)) > 0)
      await fc.assert(
        fc.asyncProperty(bytesInput(target.seeds), async (raw) => {
          const started = performance.now()
          tally.runs++
          let result: unknown
          try {
            result = await target.decode(raw)
          } catch (err) {
            assert.ok(err instanceof Error, `threw a non-Error: ${String(err)}`)
            assert.ok(
              !(err instanceof TypeError) && !(err instanceof ReferenceError),
              `a programming error: ${err.stack}`
            )
            const kind = err.name === 'RangeError' ? 'RANGE' : err.name
            tally.rejected[kind] = (tally.rejected[kind] ?? 0) + 1
            return
          } finally {
            tally.slowestCallMs = Math.max(tally.slowestCallMs, performance.now() - started)
          }
          tally.accepted++
          assert.ok(countOf(result) <= raw.length, `${countOf(result)} items from ${raw.length} bytes`)
          if (target.name === 'Fetch v4') {
            // Record sets are views of the response, never copies or reads past its end.
            for (const p of result as Array<{ records: Buffer }>)
              assert.ok(p.records.length === 0 || p.records.buffer === raw.buffer)
          }
        }),
        { numRuns: FUZZ_RUNS, seed: FUZZ_SEED }
      )
      assert.ok(tally.accepted > 0 && tally.accepted < tally.runs)
      done.push(tally)
    })
  }
})
