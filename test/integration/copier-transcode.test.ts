import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { before, describe, it } from 'node:test'
import { CODEC_IDS, parseCodecSpec } from '../../lib/codecs/index.js'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { Copier, defaultDestination, type CopyBatching, type CopyTarget } from '../../lib/copier/copier.js'
import { prepareDestinations } from '../../lib/copier/destinations.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import type { OutgoingRecord } from '../../lib/protocol/record.js'
import { checkRecompression } from '../../lib/verify/recompression.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()
before(() => installKafkajsDecoders())

/** One source partition per codec: a single copy then covers every source codec against every target codec. */
const SOURCE_CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
const TARGETS = ['none', 'gzip:6', 'snappy', 'lz4', 'zstd:3']

function bootstrap(): string {
  const first = kafka.broker.brokers[0]
  assert.ok(first !== undefined)
  return first
}

/**
 * Record i of a partition: keys null or not, values of many lengths with multi-byte UTF-8, headers none, several
 * or with a null value, and timestamps that go back as well as forward within a batch (negative deltas). No tabs
 * or newlines, so the console tools' line framing holds.
 */
function record(partition: number, i: number): OutgoingRecord {
  return {
    key: i % 5 === 0 ? null : Buffer.from(`host-${(i * 7) % 23}.p${partition}`),
    value: Buffer.from(
      `${partition}/${i} GET /items/${(i * 7919) % 10_000}?q=ä€😀 ${'x'.repeat(i % 97)} 200 ${(i * 104_729) % 9000}`
    ),
    headers:
      i % 4 === 0
        ? [
            { key: 'trace', value: Buffer.from(`t${i}`) },
            { key: 'empty', value: null }
          ]
        : i % 4 === 1
          ? [{ key: 'h', value: Buffer.from('') }]
          : [],
    timestamp: RECENT_MS + i * 3 - (i % 7) * 11
  }
}

/** kcat's view of a topic, one line per record, grouped by partition in offset order (kcat reads read_committed). */
async function kcat(topic: string): Promise<Map<number, string[]>> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      'kcat',
      ['-C', '-b', bootstrap(), '-t', topic, '-e', '-q', '-f', '%p\t%T\t%K\t%k\t%S\t%s\t%h\n'],
      { stdio: ['ignore', 'pipe', 'pipe'] }
    )
    // Decoded whole: a chunk boundary can fall inside a multi-byte character.
    const stdout: Buffer[] = []
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => stdout.push(d))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')))
    child.on('error', (e) => reject(new Error(`kcat did not start (bash scripts/ensure-apt.sh kcat): ${e.message}`)))
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(stdout).toString('utf8'))
        : reject(new Error(`kcat exited ${code}: ${stderr.slice(-2000)}`))
    )
  })
  return byPartition(
    out.split('\n').filter((line) => line !== ''),
    (line) => Number(line.slice(0, line.indexOf('\t')))
  )
}

/** The Java console consumer's view, read_committed: partition, timestamp, headers, key and value of each record. */
async function javaConsumer(topic: string, records: number): Promise<Map<number, string[]>> {
  const result = await runKafkaJavaTool(
    KafkaMainClasses.CONSOLE_CONSUMER,
    [
      '--bootstrap-server',
      bootstrap(),
      '--topic',
      topic,
      '--from-beginning',
      '--max-messages',
      String(records),
      '--timeout-ms',
      '30000',
      '--isolation-level',
      'read_committed',
      '--property',
      'print.partition=true',
      '--property',
      'print.timestamp=true',
      '--property',
      'print.headers=true',
      '--property',
      'print.key=true'
    ],
    { timeoutMs: 90_000 }
  )
  const lines = result.stdout.split('\n').filter((line) => line.startsWith('CreateTime:'))
  assert.equal(
    lines.length,
    records,
    `the Java consumer printed every record of ${topic}:\n${result.stderr.slice(-2000)}`
  )
  return byPartition(lines, (line) => Number(/Partition:(\d+)/.exec(line)?.[1]))
}

function byPartition(lines: readonly string[], partitionOf: (line: string) => number): Map<number, string[]> {
  const out = new Map<number, string[]>()
  for (const line of lines) out.set(partitionOf(line), [...(out.get(partitionOf(line)) ?? []), line])
  return new Map([...out].sort(([a], [b]) => a - b))
}

/** deepEqual for per-partition lines that names the first line that differs instead of printing every line. */
function assertSameLines(
  actual: ReadonlyMap<number, readonly string[]>,
  expected: ReadonlyMap<number, readonly string[]>,
  what: string
): void {
  assert.deepEqual([...actual.keys()], [...expected.keys()], `${what}: partitions`)
  for (const [partition, lines] of expected) {
    const got = actual.get(partition) ?? []
    const at = lines.findIndex((line, i) => got[i] !== line)
    assert.equal(
      at,
      -1,
      `${what}: partition ${partition} record ${at} reads ${JSON.stringify(got[at])}, the source ${JSON.stringify(lines[at])}`
    )
    assert.equal(got.length, lines.length, `${what}: partition ${partition} record count`)
  }
}

function targetsFor(source: string, specs: readonly string[]): CopyTarget[] {
  return specs.map((s) => ({ spec: parseCodecSpec(s), topic: defaultDestination(source, parseCodecSpec(s)) }))
}

async function copy(
  source: string,
  targets: CopyTarget[],
  batching: CopyBatching,
  exactlyOnce = false
): Promise<Copier> {
  await prepareDestinations(kafka.admin, source, targets)
  const cluster = createCluster(kafka.connection, kafka.log)
  await cluster.connect()
  const producer = new Producer(
    {
      ...DEFAULT_PRODUCER_CONFIG,
      lingerMs: 20,
      topicCodecs: Object.fromEntries(targets.map((t) => [t.topic, t.spec]))
    },
    {
      cluster: createCluster(kafka.connection, kafka.log),
      log: kafka.log,
      ...(exactlyOnce ? { transactionalId: `tx-${targets[0]?.topic}` } : {})
    }
  )
  await producer.start()
  const copier = new Copier(
    {
      sourceTopic: source,
      groupId: `g-${targets[0]?.topic}`,
      targets,
      exactlyOnce,
      commitIntervalMs: 300,
      stopAtEnd: true,
      batching
    },
    { cluster, admin: kafka.admin, producer, log: kafka.log }
  )
  try {
    await copier.run()
  } finally {
    await producer.close()
    await cluster.disconnect()
  }
  return copier
}

/** Per partition, the base offset and record count of each stored data batch: the batch boundaries. */
async function boundaries(topic: string): Promise<Map<number, string[]>> {
  const stored = (await kafka.readAll([topic], { isolation: 'read_uncommitted' })).filter(
    ({ batch }) => !batch.isControl
  )
  return byPartitionOf(
    stored.map(({ partition, batch }) => ({ partition, line: `${batch.baseOffset}+${batch.recordCount}` }))
  )
}

function byPartitionOf(rows: ReadonlyArray<{ partition: number; line: string }>): Map<number, string[]> {
  return byPartition(
    rows.map((r) => `${r.partition}\t${r.line}`),
    (line) => Number(line.slice(0, line.indexOf('\t')))
  )
}

describe('copier, --batching source (transcoding)', () => {
  it(
    "every source codec into every target codec: kcat and the Java consumer read each destination byte-identical to the source, in the source's batches",
    { timeout: 600_000 },
    async (t) => {
      const source = await kafka.createTopic(t, { partitions: SOURCE_CODECS.length })
      const perPartition = 700
      for (const [partition, codec] of SOURCE_CODECS.entries()) {
        const producer = await kafka.startProducer({
          codec: parseCodecSpec(codec),
          lingerMs: 5,
          batchSizeBytes: 16 * 1024
        })
        for (let i = 0; i < perPartition; i++)
          await producer.send({ topic: source, partition, ...record(partition, i) })
        await producer.close()
      }
      const total = perPartition * SOURCE_CODECS.length
      const targets = targetsFor(source, TARGETS)
      t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
      const copier = await copy(source, targets, 'source')
      assert.equal(copier.snapshot().sourceRecords, total)

      const sourceBatches = await boundaries(source)
      assert.ok(
        [...sourceBatches.values()].every((list) => list.length > 1),
        'each source partition holds several batches'
      )
      const stored = await kafka.readAll(
        targets.map((x) => x.topic),
        { isolation: 'read_uncommitted' }
      )
      for (const target of targets) {
        assertSameLines(
          await boundaries(target.topic),
          sourceBatches,
          `${target.topic} keeps the source's batch boundaries`
        )
        const codecs = new Set(stored.filter((s) => s.topic === target.topic).map((s) => s.batch.codecId))
        assert.deepEqual(
          [...codecs],
          [CODEC_IDS[target.spec.codec]],
          `${target.topic} batches are ${target.spec.codec}`
        )
      }
      assert.equal(
        checkRecompression(copier.ackedBatches(), stored).verdict,
        'kept',
        'the broker stored every transcoded batch as sent'
      )

      const expectedKcat = await kcat(source)
      assert.equal(
        [...expectedKcat.values()].reduce((n, l) => n + l.length, 0),
        total
      )
      const expectedJava = await javaConsumer(source, total)
      for (const target of targets) {
        assertSameLines(await kcat(target.topic), expectedKcat, `kcat reads ${target.topic} as the source`)
        assertSameLines(
          await javaConsumer(target.topic, total),
          expectedJava,
          `the Java consumer reads ${target.topic} as the source`
        )
      }
    }
  )

  it(
    "a transactional source with an aborted transaction: destinations hold the committed records in the copier producer's batches, transactional exactly-once only",
    { timeout: 300_000 },
    async (t) => {
      const source = await kafka.createTopic(t, { partitions: 2 })
      const producer = new Producer(
        { ...DEFAULT_PRODUCER_CONFIG, codec: parseCodecSpec('lz4'), lingerMs: 5, batchSizeBytes: 8 * 1024 },
        { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log, transactionalId: `src-${source}` }
      )
      await producer.start()
      for (const [n, outcome] of (['commit', 'abort', 'commit'] as const).entries()) {
        producer.beginTransaction()
        for (let i = 0; i < 400; i++)
          await producer.send({ topic: source, partition: i % 2, ...record(i % 2, n * 1000 + i) })
        if (outcome === 'commit') await producer.commitTransaction()
        else await producer.abortTransaction()
      }
      await producer.close()
      const sourceIds = new Set((await kafka.readAll([source])).map(({ batch }) => batch.producerId))
      const expected = await kcat(source)
      assert.equal(
        [...expected.values()].reduce((n, l) => n + l.length, 0),
        800,
        'kcat reads the two committed transactions'
      )

      for (const exactlyOnce of [false, true]) {
        const targets = targetsFor(source, ['zstd:3', 'none']).map((x) => ({
          ...x,
          topic: `${x.topic}-${exactlyOnce ? 'eos' : 'alo'}`
        }))
        t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
        const copier = await copy(source, targets, 'source', exactlyOnce)
        assert.equal(copier.snapshot().sourceRecords, 800)
        for (const target of targets) {
          assertSameLines(
            await kcat(target.topic),
            expected,
            `kcat reads ${target.topic} as the source's committed records`
          )
          const data = (await kafka.readAll([target.topic], { isolation: 'read_uncommitted' })).filter(
            ({ batch }) => !batch.isControl
          )
          assert.ok(data.length > 0)
          for (const { batch } of data) {
            assert.equal(
              batch.isTransactional,
              exactlyOnce,
              `${target.topic} batch at ${batch.baseOffset}: transactional bit`
            )
            assert.ok(
              !sourceIds.has(batch.producerId),
              `${target.topic} batch at ${batch.baseOffset} carries the copier's producer id, not the source's`
            )
          }
        }
      }
    }
  )
})
