import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { before, describe, it, type TestContext } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { Copier, defaultDestination } from '../../lib/copier/copier.js'
import { prepareDestinations } from '../../lib/copier/destinations.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { createCopierMetrics } from '../../lib/metrics/copier-metrics.js'
import { createRegistry } from '../../lib/metrics/registry.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const RECORDS = 1000
const BIG_AT = 500

const kafka = useTestKafka()
before(() => installKafkajsDecoders())

function label(value: Buffer | null): string {
  return value === null ? '<null>' : value.length > 1000 ? 'BIG' : value.toString()
}

/**
 * A source of 2 partitions (records alternate) and two destinations: A (none) takes anything up to 1 MB, B (lz4)
 * only batches up to 20,000 bytes. Record BIG_AT, 60 KB of random bytes, fits A and not B.
 */
async function setUp(t: TestContext): Promise<{ source: string; a: string; b: string; big: Buffer }> {
  const source = await kafka.createTopic(t, { partitions: 2 })
  const a = defaultDestination(source, parseCodecSpec('none'))
  const b = await kafka.createTopic(t, {
    partitions: 2,
    name: defaultDestination(source, parseCodecSpec('lz4')),
    configs: { 'max.message.bytes': '20000', 'compression.type': 'producer' }
  })
  t.after(() => kafka.admin.deleteTopics({ topics: [a] }).catch(() => undefined))
  const big = Buffer.concat([Buffer.from('big:'), randomBytes(60 * 1024)])
  const producer = await kafka.startProducer({ codec: parseCodecSpec('none'), lingerMs: 5 })
  for (let i = 0; i < RECORDS; i++) {
    await producer.send({
      topic: source,
      partition: i % 2,
      key: Buffer.from(`k${i}`),
      value: i === BIG_AT ? big : Buffer.from(`record-${i}`),
      timestamp: RECENT_MS + i
    })
  }
  await producer.close()
  return { source, a, b, big }
}

/** Per partition, the values in offset order. */
async function valuesByPartition(topic: string): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>()
  for (const { partition, batch } of await kafka.readAll([topic])) {
    out.set(partition, [...(out.get(partition) ?? []), ...batch.records.map((r) => label(r.value))])
  }
  return out
}

function expected(without: string | null): Map<number, string[]> {
  const out = new Map<number, string[]>([
    [0, []],
    [1, []]
  ])
  for (let i = 0; i < RECORDS; i++) {
    const value = i === BIG_AT ? 'BIG' : `record-${i}`
    if (value !== without) out.get(i % 2)?.push(value)
  }
  return out
}

function copy(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'copy',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--until-end',
        '--commit-interval-ms',
        '200',
        '-X',
        'linger.ms=20',
        '--log-level',
        'error',
        ...args
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' }, stdio: ['ignore', 'pipe', 'pipe'] }
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

async function committedOffsets(groupId: string, topic: string): Promise<number[]> {
  const [offsets] = await kafka.admin.fetchOffsets({ groupId, topics: [topic] })
  return (offsets?.partitions ?? []).sort((x, y) => x.partition - y.partition).map((p) => Number(p.offset))
}

async function endOffsets(topic: string): Promise<number[]> {
  return (await kafka.admin.fetchTopicOffsets(topic))
    .sort((x, y) => x.partition - y.partition)
    .map((p) => Number(p.high))
}

describe('copier: a record one destination refuses (over its max.message.bytes)', () => {
  it('--dead-letter-topic: every other record reaches every destination, the refused one lands in the DLT once, offsets reach the end, a restart adds nothing', async (t) => {
    const { source, a, b, big } = await setUp(t)
    const dlt = `${source}.dead-letters`
    t.after(() => kafka.admin.deleteTopics({ topics: [dlt] }).catch(() => undefined))
    const args = ['--topic', source, '--targets', 'none,lz4', '--group', `g-${source}`, '--dead-letter-topic', dlt]

    const first = await copy(args)
    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, /^copied 1000 records from [^]*, 1 copies refused \(sent to .*dead-letters\)/)
    assert.deepEqual(
      await committedOffsets(`g-${source}`, source),
      await endOffsets(source),
      'source offsets committed to the end'
    )

    const second = await copy(args)
    assert.equal(second.code, 0, second.stderr)
    assert.match(second.stdout, /^copied 0 records /)

    assert.deepEqual(await valuesByPartition(a), expected(null), 'A holds every record, in order, once')
    assert.deepEqual(
      await valuesByPartition(b),
      expected('BIG'),
      'B holds every record but the refused one, in order, once'
    )
    const letters = (await kafka.readAll([dlt])).flatMap(({ batch }) => batch.records)
    assert.equal(letters.length, 1, 'the refused record is in the dead-letter topic once')
    const [letter] = letters
    assert.ok(letter !== undefined)
    assert.deepEqual(letter.value, big)
    assert.equal(letter.key?.toString(), `k${BIG_AT}`)
    assert.equal(letter.timestamp, RECENT_MS + BIG_AT)
    const headers = Object.fromEntries(letter.headers.map((h) => [h.key, h.value?.toString()]))
    assert.equal(headers['squeeze.error.code'], 'SQUEEZE_ERR_RECORD_TOO_LARGE')
    assert.match(headers['squeeze.error'] ?? '', /MESSAGE_TOO_LARGE/)
    assert.equal(headers['squeeze.source.topic'], source)
    assert.equal(headers['squeeze.source.partition'], '0')
    assert.equal(headers['squeeze.source.offset'], String(BIG_AT / 2))
    assert.equal(headers['squeeze.destination.topic'], b)
  })

  it('onRefused skip (in process): the record is counted by destination and code and skipped, the copy goes on to the end', async (t) => {
    const { source, a, b } = await setUp(t)
    const targets = ['none', 'lz4'].map((spec) => ({
      spec: parseCodecSpec(spec),
      topic: defaultDestination(source, parseCodecSpec(spec))
    }))
    await prepareDestinations(kafka.admin, source, targets)
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        lingerMs: 20,
        topicCodecs: Object.fromEntries(targets.map((t) => [t.topic, t.spec]))
      },
      { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log }
    )
    await producer.start()
    t.after(() => producer.close())
    const registry = createRegistry()
    const sourceCluster = createCluster(kafka.connection, kafka.log)
    await sourceCluster.connect()
    t.after(() => sourceCluster.disconnect())
    const copier = new Copier(
      {
        sourceTopic: source,
        groupId: `g-${source}`,
        targets,
        exactlyOnce: false,
        commitIntervalMs: 200,
        stopAtEnd: true,
        onRefused: 'skip'
      },
      { cluster: sourceCluster, admin: kafka.admin, producer, log: kafka.log, metrics: createCopierMetrics(registry) }
    )
    await copier.run()
    assert.equal(copier.snapshot().sourceRecords, RECORDS)
    assert.equal(copier.snapshot().refused, 1)
    const refused = (await registry.getSingleMetric('squeeze_copier_records_refused_total')?.get())?.values
    assert.deepEqual(
      refused?.map((v) => [v.labels, v.value]),
      [[{ destination: b, code: 'SQUEEZE_ERR_RECORD_TOO_LARGE' }, 1]]
    )
    assert.deepEqual(await committedOffsets(`g-${source}`, source), await endOffsets(source))
    assert.deepEqual(await valuesByPartition(a), expected(null))
    assert.deepEqual(await valuesByPartition(b), expected('BIG'))
  })

  it('by default the copy stops with one line naming the refused record, and commits nothing past it', async (t) => {
    const { source } = await setUp(t)
    const result = await copy(['--topic', source, '--targets', 'none,lz4', '--group', `g-${source}`])
    assert.equal(result.code, 1)
    assert.match(
      result.stderr,
      new RegExp(`refused the record at ${source}-0 offset ${BIG_AT / 2}: .*MESSAGE_TOO_LARGE.*--dead-letter-topic`)
    )
    const [committed] = await committedOffsets(`g-${source}`, source)
    assert.ok(
      committed === undefined || committed <= BIG_AT / 2,
      `partition 0 committed up to ${committed}, not past the refused record`
    )
  })
})
