import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { before, describe, it } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { Copier, defaultDestination, type CopyBatching, type CopyTarget } from '../../lib/copier/copier.js'
import { prepareDestinations } from '../../lib/copier/destinations.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { checkRecompression } from '../../lib/verify/recompression.js'
import { SqueezeError, isTransient } from '../../lib/errors.js'
import { retry } from '../../lib/retry.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { scrapeCounter } from '../helpers/metrics.js'
import { freePort } from '../helpers/ports.js'

const ASK_AGAIN = { retries: 20, initialDelayMs: 50, maxDelayMs: 500, shouldRetry: isTransient }

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

const kafka = useTestKafka()
before(() => installKafkajsDecoders())

async function fillSource(topic: string, count: number): Promise<void> {
  const producer = await kafka.startProducer({
    codec: parseCodecSpec('lz4:1'),
    lingerMs: 10,
    batchSizeBytes: 32 * 1024
  })
  for (let i = 0; i < count; i++) {
    await producer.send({
      topic,
      key: i % 6 === 0 ? null : Buffer.from(`user-${i % 41}`),
      value: Buffer.from(`${i} ${'GET /api/orders?id='.repeat(1 + (i % 3))}${i * 31} 200`),
      headers:
        i % 4 === 0
          ? [
              { key: 'trace', value: Buffer.from(`t${i}`) },
              { key: 'null-header', value: null }
            ]
          : [],
      timestamp: RECENT_MS + i
    })
  }
  await producer.close()
}

/** Per partition, the ordered list of record digests: what "the same records in the same partitions" means. */
async function partitionDigests(
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted' = 'read_committed'
): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>()
  for (const { partition, batch } of await kafka.readAll([topic], { isolation })) {
    const list = out.get(partition) ?? []
    for (const r of batch.records) {
      list.push(
        createHash('sha1')
          .update(
            JSON.stringify([
              r.key?.toString('base64') ?? null,
              r.value?.toString('base64') ?? null,
              r.timestamp,
              r.headers.map((h) => [h.key, h.value?.toString('base64') ?? null])
            ])
          )
          .digest('hex')
      )
    }
    out.set(partition, list)
  }
  return out
}

function targetsFor(source: string, specs: string[]): CopyTarget[] {
  return specs.map((s) => ({ spec: parseCodecSpec(s), topic: defaultDestination(source, parseCodecSpec(s)) }))
}

async function runCopier(
  source: string,
  targets: CopyTarget[],
  exactlyOnce: boolean,
  budget: { maxRecords?: number; maxBytes?: number; commitIntervalMs?: number; batching?: CopyBatching } = {}
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
      ...(exactlyOnce ? { transactionalId: `tx-${source}` } : {})
    }
  )
  await producer.start()
  const copier = new Copier(
    {
      sourceTopic: source,
      groupId: `g-${targets[0]?.topic ?? source}`,
      targets,
      exactlyOnce,
      commitIntervalMs: 300,
      stopAtEnd: true,
      ...budget
    },
    { cluster, admin: kafka.admin, producer, log: kafka.log }
  )
  await copier.run()
  await producer.close()
  await cluster.disconnect()
  return copier
}

describe('copier', () => {
  for (const [exactlyOnce, batching] of [
    [false, 'rebatch'],
    [true, 'rebatch'],
    [false, 'source'],
    [true, 'source']
  ] as const) {
    it(`${exactlyOnce ? 'exactly-once' : 'at-least-once'}, --batching ${batching}: every destination holds the source's records, partitions, keys, headers and timestamps`, async (t) => {
      const source = await kafka.createTopic(t, { partitions: 3 })
      await fillSource(source, 3000)
      const targets = targetsFor(source, ['none', 'zstd:3', 'lz4:1', 'gzip:1'])
      t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
      const copier = await runCopier(source, targets, exactlyOnce, { batching })
      assert.equal(copier.snapshot().sourceRecords, 3000)
      const expected = await partitionDigests(source)
      for (const target of targets) {
        const actual = await partitionDigests(target.topic)
        assert.deepEqual(actual, expected, `${target.topic} differs from the source`)
      }
      // The broker kept every batch the copier sent, byte for byte.
      const stored = (
        await kafka.readAll(
          targets.map((x) => x.topic),
          { isolation: 'read_uncommitted' }
        )
      ).map(({ topic, partition, batch }) => ({ topic, partition, batch }))
      const check = checkRecompression(copier.ackedBatches(), stored)
      assert.equal(check.verdict, 'kept')
      assert.ok(check.batchesChecked > 0)
    })
  }

  it('at-least-once, a commit every 10 ms (each waits for its acknowledgements while the copy goes on): no committed offset is ahead of what every destination holds, and none is lost or duplicated', async (t) => {
    const source = await kafka.createTopic(t, { partitions: 3 })
    await fillSource(source, 12_000)
    const targets = targetsFor(source, ['none', 'zstd:3'])
    t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
    let copying = true
    const copy = runCopier(source, targets, false, { commitIntervalMs: 10 }).finally(() => (copying = false))
    const groupId = `g-${targets[0]?.topic ?? source}`
    let checks = 0
    do {
      // The committed offsets first, then what the destinations hold: a commit past unacknowledged copies shows as committed > held.
      // The group's coordinator answers COORDINATOR_LOAD_IN_PROGRESS while it loads a new group's partition.
      const [committed] = await retry(() => kafka.admin.fetchOffsets({ groupId, topics: [source] }), ASK_AGAIN)
      for (const target of targets) {
        const held = new Map(
          (await retry(() => kafka.admin.fetchTopicOffsets(target.topic), ASK_AGAIN)).map((o) => [
            o.partition,
            Number(o.high)
          ])
        )
        for (const { partition, offset } of committed?.partitions ?? []) {
          if (Number(offset) < 0) continue
          assert.ok(
            Number(offset) <= (held.get(partition) ?? 0),
            `${source}-${partition} committed at ${offset}, but ${target.topic} holds ${held.get(partition)} records`
          )
          checks++
        }
      }
    } while (copying)
    const copier = await copy
    assert.ok(copier.snapshot().commits > 1, `${copier.snapshot().commits} commits`)
    assert.ok(checks > 0, 'the commits were checked')
    const expected = await partitionDigests(source)
    for (const target of targets)
      assert.deepEqual(await partitionDigests(target.topic), expected, `${target.topic} differs from the source`)
  })

  it('--records and --bytes budgets stop at a record: every destination holds the same records, the ones the source offsets were copied up to', async (t) => {
    const source = await kafka.createTopic(t, { partitions: 3 })
    await fillSource(source, 3000)
    const expected = await partitionDigests(source)
    for (const budget of [
      { maxRecords: 1234 },
      { maxBytes: 50_000 },
      { maxRecords: 1234, batching: 'source' as const }
    ]) {
      const targets = targetsFor(source, ['none', 'lz4:1']).map((target) => ({
        ...target,
        topic: `${target.topic}-${Object.keys(budget).join('-')}`
      }))
      t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
      const copier = await runCopier(source, targets, false, budget)
      const { sourceRecords, sourceBytes } = copier.snapshot()
      if (budget.maxRecords !== undefined) assert.equal(sourceRecords, budget.maxRecords)
      else
        assert.ok(
          sourceBytes >= budget.maxBytes && sourceBytes < budget.maxBytes + 200,
          `${sourceBytes} bytes copied for a budget of ${budget.maxBytes}`
        )
      // Each partition's copy is its source's first records, up to where the copy says it read.
      const upTo = copier.copiedUpTo()
      const copied = new Map<number, string[]>()
      for (const [partition, list] of expected)
        if ((upTo.get(partition) ?? 0) > 0) copied.set(partition, list.slice(0, upTo.get(partition)))
      assert.equal(
        [...copied.values()].reduce((n, list) => n + list.length, 0),
        sourceRecords
      )
      for (const target of targets)
        assert.deepEqual(await partitionDigests(target.topic), copied, `${target.topic} holds the budget's records`)
    }
  })

  it('/metrics answers while the copier works through one large fetch: a scrape lands mid-fetch (0 < copied < total)', async (t) => {
    const source = await kafka.createTopic(t, { partitions: 1 })
    const total = 30_000
    const producer = await kafka.startProducer({ codec: parseCodecSpec('zstd:3'), lingerMs: 20 })
    await producer.sendMany(
      Array.from({ length: total }, (_, i) => ({
        topic: source,
        partition: 0,
        key: null,
        value: Buffer.from(String(i)),
        timestamp: RECENT_MS + i
      }))
    )
    await producer.close()
    // One fetch (the copier asks for 256 KiB per partition) holds the whole source, so a scrape can land mid-copy
    // only if the copy loop lets the event loop run within a fetch, not just between fetches.
    const stored = (await kafka.readAll([source])).reduce((n, { batch }) => n + batch.storedBytes, 0)
    assert.ok(stored < 256 * 1024, `the source takes ${stored} bytes, more than one fetch`)
    const [target] = targetsFor(source, ['none']) as [CopyTarget]
    t.after(() => kafka.admin.deleteTopics({ topics: [target.topic] }).catch(() => undefined))
    const port = await freePort()
    // Re-batching: a source batch copied whole (--batching source) is one step, and the one batch here would leave no midpoint.
    const child = spawn(
      process.execPath,
      [
        CLI,
        'copy',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--topic',
        source,
        '--targets',
        'none',
        '--until-end',
        '--batching',
        'rebatch',
        '--metrics-port',
        String(port),
        '--log-level',
        'warn'
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' } }
    )
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    let exited = false
    const exit = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        exited = true
        resolve(code)
      })
    )
    const counts: number[] = []
    while (!exited) {
      const copied = await scrapeCounter(port, 'squeeze_copier_source_records_total')
      if (copied !== null) counts.push(copied)
    }
    assert.equal(await exit, 0, stderr)
    const midway = counts.filter((n) => n > 0 && n < total)
    assert.ok(midway.length > 0, `no scrape answered mid-copy; counts seen: ${[...new Set(counts)].join(', ')}`)
  })

  it('a destination with another compression.type is an error that says what to change, and nothing is created', async (t) => {
    const source = await kafka.createTopic(t, { partitions: 2 })
    const [good, bad] = targetsFor(source, ['lz4:1', 'zstd:3']) as [CopyTarget, CopyTarget]
    await kafka.createTopic(t, { name: bad.topic, partitions: 2, configs: { 'compression.type': 'gzip' } })
    await assert.rejects(
      prepareDestinations(kafka.admin, source, [good, bad]),
      (err: unknown) => err instanceof SqueezeError && /compression\.type=gzip; set it to producer/.test(err.message)
    )
    assert.equal((await kafka.admin.listTopics()).includes(good.topic), false, 'no destination was created')
    await assert.rejects(
      prepareDestinations(kafka.admin, 'no-such-source', [good]),
      /source topic no-such-source not found on the cluster/
    )
  })

  it(
    'exactly-once survives SIGKILL: killed mid-copy and restarted, each destination holds each record once',
    { timeout: 180_000 },
    async (t) => {
      const source = await kafka.createTopic(t, { partitions: 2 })
      // Large enough that the copy outlasts the poll below by seconds: at 20,000 records a faster copier finished
      // before the kill landed.
      const total = 60_000
      await fillSource(source, total)
      const targets = ['none', 'zstd:1']
      const args = [
        'copy',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--topic',
        source,
        '--targets',
        targets.join(','),
        '--exactly-once',
        '--transactional-id',
        `kill-${source}`,
        '--until-end',
        '--commit-interval-ms',
        '100',
        '-X',
        'linger.ms=5',
        '-X',
        'batch.size=16384',
        '--log-level',
        'info'
      ]
      t.after(() =>
        kafka.admin.deleteTopics({ topics: targetsFor(source, targets).map((x) => x.topic) }).catch(() => undefined)
      )
      const run = (killOnFirstRecords = false) =>
        new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, KAFKA_BROKERS: '' } })
          t.after(() => child.kill('SIGKILL'))
          let stderr = ''
          child.stderr.on('data', (d: Buffer) => {
            stderr += d.toString()
            if (process.env.SQUEEZE_TEST_CHILD_LOG !== undefined) appendFileSync(process.env.SQUEEZE_TEST_CHILD_LOG, d)
          })
          if (killOnFirstRecords) {
            // Kill once it has started copying: SIGKILL as soon as the first destination records show.
            const poll = setInterval(async () => {
              const offsets = await kafka.admin
                .fetchTopicOffsets(defaultDestination(source, parseCodecSpec('none')))
                .catch(() => [])
              if (offsets.some((o) => Number(o.high) > 0)) {
                clearInterval(poll)
                child.kill('SIGKILL')
              }
            }, 20)
            child.on('exit', () => clearInterval(poll))
          }
          child.on('exit', (code, signal) => resolve({ code, signal, stderr }))
        })
      const first = await run(true)
      assert.equal(
        first.signal,
        'SIGKILL',
        `the first run should be killed mid-copy (exit ${first.code}: ${first.stderr})`
      )
      const second = await run()
      assert.equal(second.code, 0, second.stderr.slice(-3000))
      const expected = await partitionDigests(source)
      for (const target of targetsFor(source, targets)) {
        const actual = await partitionDigests(target.topic, 'read_committed')
        assert.deepEqual(actual, expected, `${target.topic}: each source record exactly once, in order`)
      }
    }
  )
})
