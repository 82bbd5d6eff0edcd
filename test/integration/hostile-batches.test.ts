import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import type { EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { createCodec } from '../../lib/codecs/index.js'
import { DEFAULT_READER_CONFIG, PartitionReader, type CorruptBatchEvent } from '../../lib/consumer/partition-reader.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import type { KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import { produceRequest } from '../../lib/kafka/produce-request.js'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { createReaderMetrics } from '../../lib/metrics/reader-metrics.js'
import { createRegistry } from '../../lib/metrics/registry.js'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { buildBatch } from '../../lib/protocol/record-batch-builder.js'
import { gzipBomb, zstdBomb } from '../helpers/decompression-bomb.js'
import { retry } from '../../lib/retry.js'
import { startBrokerBehindProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const log = createLogger({ level: (process.env.SQUEEZE_TEST_LOG_LEVEL ?? 'silent') as 'silent' })
const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const PEAK_RSS_HOOK = fileURLToPath(new URL('../helpers/report-peak-rss.js', import.meta.url))
const MiB = 1024 * 1024
/**
 * The peak resident set a `consume` or `copy` child may reach while reading a topic that holds both bombs (each
 * 896 MiB inflated): the figure README.md and docs/reliability.md state.
 */
const PEAK_RSS_BOUND_BYTES = 256 * MiB

let proxy: TcpProxy
let broker: EmbeddedBroker
let connection: KafkaConnectionConfig
let brokers: string

// Every client connection goes through the proxy (the broker advertises the proxy's port), so a test can corrupt a
// Fetch response in transit.
before(async () => {
  ;({ proxy, broker, bootstrap: brokers } = await startBrokerBehindProxy())
  connection = { ...DEFAULT_CONNECTION, brokers: [brokers], clientId: 'squeeze-hostile' }
})
after(async () => {
  await broker?.stop()
  await proxy?.close()
})

async function createTopic(topic: string): Promise<void> {
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  try {
    const configEntries = [{ name: 'compression.type', value: 'producer' }]
    await createTopicsAndWait(admin, [{ topic, numPartitions: 1, configEntries }])
  } finally {
    await admin.disconnect()
  }
}

/** Sends raw batches, one request each, to partition 0 with squeeze's own Produce request; each must be accepted. */
async function sendRaw(topic: string, batches: readonly Buffer[]): Promise<void> {
  const cluster = createCluster(connection, log)
  await cluster.connect()
  try {
    // Metadata for a topic created a moment ago can lag behind on this new connection.
    const leader = await retry(
      async () => {
        await cluster.addTargetTopic(topic)
        const found = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === 0)?.leader
        if (found === undefined || found < 0) throw new Error(`no leader yet for ${topic}`)
        return found
      },
      { retries: 20, initialDelayMs: 100, maxDelayMs: 1000, shouldRetry: () => true }
    )
    const broker = await cluster.findBroker({ nodeId: leader })
    for (const batch of batches) {
      const batches = [{ topic, partition: 0, batch }]
      const { request, response } = produceRequest({ acks: -1, timeoutMs: 60_000, transactionalId: null, batches })
      const [result] = await broker.connectionPool.send({ request, response })
      assert.equal(result?.errorCode, 0, `the broker accepts the batch (error ${result?.errorCode})`)
    }
  } finally {
    await cluster.disconnect()
  }
}

/** A small ordinary batch: `count` zstd-compressed records valued `${tag}-i`. */
function plainBatch(tag: string, count: number): Buffer {
  const value = (i: number): Buffer => Buffer.from(`${tag}-${i} GET /index.html 200`)
  const records = Array.from({ length: count }, (_, i) => ({ key: null, value: value(i), headers: [] }))
  return Buffer.from(buildBatch(records, createCodec({ codec: 'zstd', level: 3 })).bytes)
}

interface MeasuredRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly peakRssBytes: number
}

/** Runs the built CLI as a child with its peak RSS (VmHWM at exit) reported through a preloaded hook. */
function runMeasured(args: readonly string[]): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-rss-'))
  const file = join(dir, 'peak')
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', PEAK_RSS_HOOK, CLI, ...args],
      {
        env: { ...process.env, KAFKA_BROKERS: '', SQUEEZE_PEAK_RSS_FILE: file },
        timeout: 240_000,
        maxBuffer: 64 * MiB
      },
      (err, stdout, stderr) => {
        const peakRssBytes = Number(readFileSync(file, 'utf8'))
        rmSync(dir, { recursive: true, force: true })
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr, peakRssBytes })
      }
    )
  })
}

/** Reads `topic` to its end in this process, with a fresh registry; returns the values read and the batches skipped. */
async function readInProcess(topic: string, options: { start?: number } = {}) {
  const cluster = createCluster(connection, log)
  const admin = createKafkaClient(connection, log).admin()
  await Promise.all([cluster.connect(), admin.connect()])
  const registry = createRegistry({ defaultMetrics: false })
  const values: string[] = []
  const skipped: CorruptBatchEvent[] = []
  try {
    const assigned = options.start !== undefined
    const config = {
      ...DEFAULT_READER_CONFIG,
      topics: [topic],
      ...(assigned ? { partitions: 'assigned' as const } : {})
    }
    const reader = new PartitionReader(config, { cluster, admin, log, metrics: createReaderMetrics(registry) })
    if (assigned) await reader.assign([{ topic, partition: 0, offset: options.start ?? null }])
    await reader.run({
      onBatch: ({ batch }) => {
        for (const r of batch.records) values.push(r.value?.toString() ?? '')
      },
      onCorruptBatch: (event) => {
        skipped.push(event)
      }
    })
  } finally {
    await Promise.all([cluster.disconnect(), admin.disconnect()])
  }
  return { values, skipped, metrics: await registry.getMetricsAsJSON() }
}

type MetricsJson = Awaited<ReturnType<typeof readInProcess>>['metrics']
type Sample = { value: number; labels: Record<string, string | number> }

function counterValue(metrics: MetricsJson, name: string, labels: Record<string, string>): number {
  const metric = metrics.find((m) => m.name === name) as { values?: Sample[] } | undefined
  const matches = (v: Sample): boolean => Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l)
  return (metric?.values ?? []).filter(matches).reduce((n, v) => n + v.value, 0)
}

describe('decompression bombs on a real topic', () => {
  const topic = 'bombs'
  let zstdBytes = 0
  let gzipBytes = 0

  before(async () => {
    await createTopic(topic)
    // 14 records of 64 MiB of zeros each (896 MiB inflated), each bomb small enough for the broker to accept.
    const zstd = zstdBomb(14, 64)
    const gzip = await gzipBomb(14, 64)
    zstdBytes = zstd.length
    gzipBytes = gzip.length
    await sendRaw(topic, [plainBatch('a', 5), zstd, plainBatch('b', 5), gzip, plainBatch('c', 5)])
  })

  it('the broker stores both bombs as sent (validated by streaming), and a reader skips them as over the cap, counted by reason', async () => {
    assert.ok(zstdBytes < 64 * 1024 && gzipBytes < MiB, `${zstdBytes} and ${gzipBytes} stored bytes`)
    const { values, skipped, metrics } = await readInProcess(topic)
    assert.equal(values.length, 15)
    assert.deepEqual(
      skipped.map((s) => [s.reason, s.baseOffset]),
      [
        ['uncompressed_limit', 5],
        ['uncompressed_limit', 24]
      ]
    )
    for (const s of skipped) {
      assert.match(
        s.error.message,
        new RegExp(`^${topic}-0 batch at offsets ${s.baseOffset}\\.\\.${s.lastOffset}: .*decompression cap`)
      )
    }
    assert.equal(counterValue(metrics, 'squeeze_batches_skipped_total', { topic, reason: 'uncompressed_limit' }), 2)
  })

  it('consume keeps running, reports both skipped batches with topic, partition and offset, within the peak RSS bound', async () => {
    const run = await runMeasured(['consume', '--brokers', brokers, '--topic', topic, '--format', 'none'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(
      run.stderr,
      /bombs-0 batch at offsets 5\.\.18: cannot zstd-decompress batch at offset 5: zstd output declares \d+ bytes past the \d+-byte decompression cap/
    )
    assert.match(run.stderr, /bombs-0 batch at offsets 24\.\.37: cannot gzip-decompress/)
    assert.match(run.stdout, /\b15\b/, 'the 15 ordinary records are read')
    process.stdout.write(`# consume peak RSS over the bombs topic: ${(run.peakRssBytes / MiB).toFixed(0)} MiB\n`)
    assert.ok(run.peakRssBytes < PEAK_RSS_BOUND_BYTES, `peak RSS ${run.peakRssBytes} bytes`)
  })

  it('copy --on-refused skip keeps running and copies everything else, within the peak RSS bound; by default it stops with one line saying how to go past', async () => {
    const copy = ['copy', '--brokers', brokers, '--topic', topic, '--targets', 'lz4', '--until-end']
    const skip = await runMeasured([...copy, '--on-refused', 'skip', '--group', 'bombs-skip'])
    assert.equal(skip.code, 0, skip.stderr)
    // The summary wraps to the terminal's width: match it with its line breaks folded.
    assert.match(skip.stdout.replace(/\s+/g, ' '), /copied 15 records .*2 unreadable source batches skipped/)
    process.stdout.write(`# copy peak RSS over the bombs topic: ${(skip.peakRssBytes / MiB).toFixed(0)} MiB\n`)
    assert.ok(skip.peakRssBytes < PEAK_RSS_BOUND_BYTES, `peak RSS ${skip.peakRssBytes} bytes`)
    const fail = await runMeasured([...copy, '--group', 'bombs-fail'])
    assert.equal(fail.code, 1)
    assert.match(
      fail.stderr,
      /bombs-0 batch at offsets 5\.\.18: .*decompression cap.*--on-refused skip.*--to-offset 19/
    )
  })

  it('bench --topic and compare --mode projection leave both bombs out and count them in the input and current rows', async () => {
    const bench = await runMeasured([
      'bench',
      '--topic',
      topic,
      '--brokers',
      brokers,
      '--codecs',
      'zstd:3',
      '--runs',
      '1'
    ])
    assert.equal(bench.code, 0, bench.stderr)
    assert.match(bench.stdout.replace(/\s+/g, ' '), /15 records from the start; 2 unreadable batches left out/)
    const compare = await runMeasured([
      'compare',
      '--topic',
      topic,
      '--brokers',
      brokers,
      '--mode',
      'projection',
      '--targets',
      'zstd:3'
    ])
    assert.equal(compare.code, 0, compare.stderr)
    assert.match(compare.stdout.replace(/\s+/g, ' '), /2 source batches did not read and are left out/)
  })
})

describe('a corrupt batch length in a fetch response', () => {
  const topic = 'framing'
  const second = plainBatch('b', 4)

  before(async () => {
    await createTopic(topic)
    await sendRaw(topic, [plainBatch('a', 3), second, plainBatch('c', 5)])
  })

  it('is counted and skipped past (the next fetch starts after its last offset), and reading goes on', async () => {
    // From the CRC on, the stored batch is the one sent (the broker rewrites only its base offset and leader epoch).
    const marker = second.subarray(BATCH.CRC)
    let corrupted = 0
    // The second batch's length field (outside its CRC) set past anything a reader takes, in the first answer with it.
    proxy.rewriteResponses((frame) => {
      const at = frame.indexOf(marker)
      if (at < 0 || corrupted > 0) return
      frame.writeInt32BE(0x7ffffff0, at - BATCH.CRC + BATCH.LENGTH)
      corrupted++
    })
    try {
      const { values, skipped, metrics } = await readInProcess(topic)
      assert.equal(corrupted, 1)
      assert.deepEqual(
        values.map((v) => v.split(' ')[0]),
        ['a-0', 'a-1', 'a-2', 'c-0', 'c-1', 'c-2', 'c-3', 'c-4']
      )
      assert.deepEqual(
        skipped.map((s) => [s.reason, s.baseOffset, s.lastOffset]),
        [['framing', 3, 6]]
      )
      assert.match(
        skipped[0]?.error.message ?? '',
        /framing-0 batch at offsets 3\.\.6: corrupt batch framing: .*declares length 2147483632/
      )
      assert.equal(counterValue(metrics, 'squeeze_batches_skipped_total', { topic, reason: 'framing' }), 1)
    } finally {
      proxy.rewriteResponses(null)
    }
  })
})

describe('a read position below the log start (retention deleted records)', () => {
  const topic = 'retention'

  before(async () => {
    await createTopic(topic)
    await sendRaw(
      topic,
      Array.from({ length: 10 }, (_, i) => plainBatch(`r${i}`, 10))
    )
    const admin = createKafkaClient(connection, log).admin()
    await admin.connect()
    try {
      // kafkajs's deleteTopicRecords looks the topic up in the metadata its admin already holds.
      await admin.fetchTopicMetadata({ topics: [topic] })
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '60' }] })
      for (const groupId of ['a', 'b'])
        await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '10' }] })
    } finally {
      await admin.disconnect()
    }
  })

  it('a reader says so with the gap in records, counts it, and reads on from the log start', async () => {
    const { values, metrics } = await readInProcess(topic, { start: 10 })
    assert.equal(values.length, 40)
    assert.equal(counterValue(metrics, 'squeeze_offset_reset_gap_records_total', { topic, partition: '0' }), 50)
  })

  it('consume --group and copy both log the gap once and go on from the log start', async () => {
    const consume = await runMeasured([
      'consume',
      '--brokers',
      brokers,
      '--topic',
      topic,
      '--format',
      'none',
      '--group',
      'a'
    ])
    assert.equal(consume.code, 0, consume.stderr)
    const line =
      /retention-0: offset 10 is below the log start 60; 50 records were deleted \(retention\) before they were read/g
    assert.equal(consume.stderr.match(line)?.length, 1, consume.stderr)
    const copy = await runMeasured([
      'copy',
      '--brokers',
      brokers,
      '--topic',
      topic,
      '--targets',
      'lz4',
      '--until-end',
      '--group',
      'b'
    ])
    assert.equal(copy.code, 0, copy.stderr)
    assert.equal(copy.stderr.match(line)?.length, 1, copy.stderr)
    assert.match(copy.stdout, /copied 40 records/)
  })
})
