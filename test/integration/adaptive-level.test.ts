import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import { Registry } from 'prom-client'
import type { CompareReport } from '../../lib/compare/compare-report.js'
import { createCodec, parseCodecSpec } from '../../lib/codecs/index.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { createProducerMetrics, type ProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { DEFAULT_PRODUCER_CONFIG, Producer, type AckedBatch } from '../../lib/producer/producer.js'
import { buildBatch } from '../../lib/protocol/record-batch-builder.js'
import type { ReadBatch } from '../../lib/protocol/record-batch-reader.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { compressionThrottle, SLOW_COMPRESSION_WORKER } from '../helpers/slow-compression-worker.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const SCHEMA = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../schema/compare-report.schema.json', import.meta.url)), 'utf8')
) as object

const MIN_LEVEL = 1
const MAX_LEVEL = 6

/** Log lines with no tabs or newlines, so they survive the console tools' line framing. */
function logLine(i: number): string {
  return (
    `2024-05-18T02:40:${String(i % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z web-${i % 5} nginx[${1200 + (i % 9)}]: ` +
    `10.0.${i % 7}.${i % 250} "GET /api/v1/items/${(i * 7919) % 10_000}?q=${(i * 104729) % 977} HTTP/1.1" ${i % 17 === 0 ? 503 : 200} ${300 + ((i * 104729) % 9000)} rt=0.${String(i % 997).padStart(3, '0')}`
  )
}

type Event = { kind: 'batch'; level: number } | { kind: 'change'; direction: 'up' | 'down'; reason: string }

/** The real metrics, plus every adaptive batch and decision in the order they happened. */
function recordingMetrics(registry: Registry): { metrics: ProducerMetrics; events: Event[] } {
  const real = createProducerMetrics(registry)
  const events: Event[] = []
  return {
    events,
    metrics: {
      ...real,
      adaptiveBatch(labels) {
        events.push({ kind: 'batch', level: Number(labels.level) })
        real.adaptiveBatch(labels)
      },
      levelChanged(labels, direction, reason) {
        events.push({ kind: 'change', direction, reason })
        real.levelChanged(labels, direction, reason)
      }
    }
  }
}

interface Run {
  readonly topic: string
  readonly values: string[]
  readonly acked: AckedBatch[]
  readonly events: Event[]
  readonly registry: Registry
  /** events.length when the throttle was set, and when it was lifted. */
  readonly throttledAt: number
  readonly liftedAt: number
  readonly lowestThrottled: number
}

const kafka = useTestKafka()
let run: Run

/** Sends 25 log lines every 10 ms to `topic` until stopped (about 400 KB/s); `values` are the lines sent so far. */
function feed(producer: Producer, topic: string): { values: string[]; stop(): Promise<void>; feeding: Promise<void> } {
  const values: string[] = []
  let stopped = false
  const feeding = (async () => {
    while (!stopped) {
      const chunk = Array.from({ length: 25 }, () => {
        const value = logLine(values.length)
        values.push(value)
        return { topic, key: null, value: Buffer.from(value), timestamp: RECENT_MS + values.length }
      })
      await producer.sendMany(chunk)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  return {
    values,
    feeding,
    stop: async () => {
      stopped = true
      await feeding
    }
  }
}

/**
 * One producer with zstd:adaptive over 1..6 and a compression thread that can be slowed down: fed at a steady
 * rate, it climbs while compression keeps up; throttled to 400 ms a batch, it must come down; unthrottled, up again.
 */
async function throttledRun(): Promise<Run> {
  const topic = await kafka.createTopic(undefined, { partitions: 1 })
  const registry = new Registry()
  const { metrics, events } = recordingMetrics(registry)
  const producer = new Producer(
    {
      ...DEFAULT_PRODUCER_CONFIG,
      codec: parseCodecSpec('zstd:adaptive'),
      adaptiveLevel: { min: MIN_LEVEL, max: MAX_LEVEL },
      lingerMs: 200,
      batchSizeBytes: 64 * 1024,
      bufferMemoryBytes: 2 * 1024 * 1024
    },
    {
      cluster: createCluster(kafka.connection, kafka.log),
      log: kafka.log,
      metrics,
      compressionWorkerUrl: SLOW_COMPRESSION_WORKER
    }
  )
  const acked: AckedBatch[] = []
  producer.onBatchAcked((b) => acked.push(b))
  const throttle = compressionThrottle()
  await producer.start()
  // About 400 KB/s: a few 64 KiB batches a second, far within zstd:6 on one thread, far beyond 400 ms a batch.
  const { values, stop } = feed(producer, topic)
  try {
    const level = (): number =>
      [...events].reverse().find((e): e is Extract<Event, { kind: 'batch' }> => e.kind === 'batch')?.level ?? 0
    await poll(
      'the level to climb to 5',
      async () => level(),
      (l) => l >= 5
    )
    const throttledAt = events.length
    throttle.set(400)
    await poll(
      'a level change down',
      async () => events.slice(throttledAt).some((e) => e.kind === 'change' && e.direction === 'down'),
      (down) => down
    )
    await poll(
      'the level to come down to at most 3',
      async () => level(),
      (l) => l <= 3
    )
    const lowestThrottled = level()
    const liftedAt = events.length
    throttle.set(0)
    await poll(
      'the level to go up again',
      async () => level(),
      (l) => l > lowestThrottled
    )
    await stop()
    await producer.flush()
    assert.equal(producer.snapshot().recordsFailed, 0)
    assert.equal(producer.snapshot().recordsAcked, values.length)
    return { topic, values, acked, events, registry, throttledAt, liftedAt, lowestThrottled }
  } finally {
    await stop().catch(() => undefined)
    throttle.close()
    await producer.close()
  }
}

/** The batch's records encoded again and compressed at `level`: the batch's stored size when that was its level. */
function sizeAt(batch: ReadBatch, codec: 'zstd' | 'gzip' | 'lz4', level: number): number {
  return buildBatch(
    batch.records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })),
    createCodec({ codec, level })
  ).bytes.length
}

/**
 * Reads the topic back and checks each stored batch is, byte for byte in size, `codec` at the level the producer
 * acknowledged it with. Returns those levels in offset order, and for how many batches `other(level)` would
 * have given another size (how far the check tells levels apart).
 */
async function storedLevels(
  topic: string,
  acked: readonly AckedBatch[],
  codec: 'zstd' | 'gzip' | 'lz4',
  other: (level: number) => number
): Promise<{ levels: number[]; discriminating: number }> {
  const byOffset = new Map(acked.map((b) => [b.baseOffset, b]))
  const stored = await kafka.readAll([topic])
  assert.equal(stored.length, acked.length)
  const levels: number[] = []
  let discriminating = 0
  for (const { batch } of stored) {
    const level = byOffset.get(batch.baseOffset)?.level
    assert.ok(typeof level === 'number', `batch at ${batch.baseOffset} was acknowledged with a level`)
    assert.equal(
      sizeAt(batch, codec, level),
      batch.storedBytes,
      `batch at ${batch.baseOffset} is ${codec} level ${level} byte for byte`
    )
    if (sizeAt(batch, codec, other(level)) !== batch.storedBytes) discriminating++
    levels.push(level)
  }
  return { levels, discriminating }
}

async function counterByLevel(name: string): Promise<Map<number, number>> {
  const metric = await run.registry.getSingleMetricAsString(name)
  const byLevel = new Map<number, number>()
  for (const m of metric.matchAll(/level="(-?\d+)"[^}]*\} (\d+)/g))
    byLevel.set(Number(m[1]), (byLevel.get(Number(m[1])) ?? 0) + Number(m[2]))
  return byLevel
}

function countBy<T>(items: readonly T[], key: (item: T) => number): Map<number, number> {
  const counts = new Map<number, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}

describe('zstd:adaptive', () => {
  before(async () => {
    run = await throttledRun()
  })

  it('a producer whose compression is throttled lowers its level within a few batches, and raises it when the throttle lifts', () => {
    const afterThrottle = run.events.slice(run.throttledAt)
    const firstDown = afterThrottle.findIndex((e) => e.kind === 'change' && e.direction === 'down')
    const batchesBefore = afterThrottle.slice(0, firstDown).filter((e) => e.kind === 'batch').length
    assert.ok(batchesBefore <= 4, `first step down after ${batchesBefore} batches`)
    const downReasons = new Set(
      afterThrottle
        .slice(0, run.liftedAt - run.throttledAt)
        .filter((e) => e.kind === 'change' && e.direction === 'down')
        .map((e) => (e as { reason: string }).reason)
    )
    assert.ok(
      [...downReasons].every((r) => r === 'linger' || r === 'buffer'),
      `down for queueing: ${[...downReasons].join(', ')}`
    )
    const ups = run.events.slice(run.liftedAt).filter((e) => e.kind === 'change' && e.direction === 'up')
    assert.ok(ups.length > 0 && ups.every((e) => (e as { reason: string }).reason === 'idle'))
    const levels = new Set(run.acked.map((b) => b.level))
    assert.ok(
      [...levels].every((l) => l !== null && l >= MIN_LEVEL && l <= MAX_LEVEL),
      `levels within min/max: ${[...levels].join(', ')}`
    )
  })

  it('the level metrics match the level each batch was compressed at, read back from the broker', async () => {
    const { levels, discriminating } = await storedLevels(run.topic, run.acked, 'zstd', (level) =>
      level === MIN_LEVEL ? MAX_LEVEL : MIN_LEVEL
    )
    assert.ok(
      discriminating > levels.length / 2,
      `the size tells levels apart for ${discriminating} of ${levels.length} batches`
    )
    const perBatch = countBy(run.acked, (b) => b.level as number)
    assert.ok(perBatch.size >= 3, `several levels in use: ${[...perBatch.keys()].join(', ')}`)
    assert.deepEqual(await counterByLevel('squeeze_compression_level_batches_total'), perBatch)
    assert.deepEqual(await counterByLevel('squeeze_batches_produced_total'), perBatch)
    const gauge = await run.registry.getSingleMetricAsString('squeeze_compression_level')
    const last = [...run.events].reverse().find((e) => e.kind === 'batch') as { level: number }
    assert.match(
      gauge,
      new RegExp(`squeeze_compression_level\\{topic="${run.topic}",codec="zstd"\\} ${last.level}\\n?$`, 'm')
    )
  })

  it('the Java console consumer and kcat read every adaptive batch, in order', async () => {
    const bootstrap = kafka.broker.brokers[0] as string
    const java = await runKafkaJavaTool(
      KafkaMainClasses.CONSOLE_CONSUMER,
      [
        '--bootstrap-server',
        bootstrap,
        '--topic',
        run.topic,
        '--from-beginning',
        '--max-messages',
        String(run.values.length),
        '--timeout-ms',
        '30000'
      ],
      { timeoutMs: 90_000 }
    )
    assert.equal(java.code, 0, java.stderr.slice(-2000))
    assert.deepEqual(
      java.stdout.split('\n').filter((l) => l !== ''),
      run.values
    )
    const kcat = await new Promise<string>((resolve, reject) => {
      const child = spawn('kcat', ['-C', '-b', bootstrap, '-t', run.topic, '-e', '-q', '-f', '%s\\n'], {
        stdio: ['ignore', 'pipe', 'pipe']
      })
      let out = ''
      let err = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stderr.on('data', (d: Buffer) => (err += d.toString()))
      child.on('error', (e) => reject(new Error(`kcat did not start (bash scripts/ensure-apt.sh kcat): ${e.message}`)))
      child.on('close', (code) =>
        code === 0 ? resolve(out) : reject(new Error(`kcat exited ${code}: ${err.slice(-2000)}`))
      )
    })
    assert.deepEqual(
      kcat.split('\n').filter((l) => l !== ''),
      run.values
    )
  })

  for (const mode of ['copy', 'projection']) {
    it(`compare --mode ${mode} takes zstd:adaptive as a target, and its row shows the level mix`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'squeeze-adaptive-'))
      try {
        const result = await runSqueeze([
          'compare',
          '--brokers',
          kafka.broker.brokers.join(','),
          '--topic',
          run.topic,
          '--mode',
          mode,
          '--targets',
          'zstd:1,zstd:adaptive',
          '--json',
          join(dir, 'r.json'),
          '--log-level',
          'error',
          // The level mix can be longer than a 100-column table's target column.
          '--wide'
        ])
        assert.equal(result.code, 0, result.stderr)
        const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as CompareReport
        assert.ok(new Ajv({ allErrors: true }).validate(SCHEMA, report))
        const adaptive = report.targets.find((t) => t.target === 'zstd:adaptive')
        assert.ok(adaptive?.levelMix !== undefined && adaptive.levelMix.length > 0, 'the adaptive row has its levels')
        assert.ok(Math.abs(adaptive.levelMix.reduce((n, m) => n + m.share, 0) - 1) < 1e-9)
        assert.ok(adaptive.levelMix.every((m) => m.level >= 1 && m.level <= 19))
        assert.equal(report.targets.find((t) => t.target === 'zstd:1')?.levelMix, undefined)
        const row = `zstd:adaptive (${adaptive.levelMix.map((m) => `${m.level}×${Math.round(m.share * 100)}%`).join(', ')})`
        assert.ok(result.stdout.includes(row), `${row} in:\n${result.stdout}`)
        assert.equal(adaptive.records, run.values.length)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }
})

describe('gzip:adaptive and lz4:adaptive', () => {
  // From each codec's default (gzip 6, lz4 1) up while compression keeps up; lz4 2 and up are LZ4HC.
  for (const { codec, other } of [
    { codec: 'gzip', other: (l: number) => (l === 1 ? 9 : 1) },
    { codec: 'lz4', other: (l: number) => (l === 1 ? 9 : 1) }
  ] as const) {
    it(`${codec}: the producer moves over several levels, and every stored batch is ${codec} at the level it was acknowledged with`, async () => {
      const topic = await kafka.createTopic(undefined, { partitions: 1 })
      const producer = new Producer(
        {
          ...DEFAULT_PRODUCER_CONFIG,
          codec: parseCodecSpec(`${codec}:adaptive`),
          lingerMs: 200,
          batchSizeBytes: 64 * 1024
        },
        { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log }
      )
      const acked: AckedBatch[] = []
      producer.onBatchAcked((b) => acked.push(b))
      await producer.start()
      const { values, stop } = feed(producer, topic)
      try {
        await poll(
          `${codec} batches at 3 levels`,
          async () => new Set(acked.map((b) => b.level)).size,
          (n) => n >= 3
        )
        await stop()
        await producer.flush()
      } finally {
        await stop().catch(() => undefined)
        await producer.close()
      }
      assert.equal(producer.snapshot().recordsAcked, values.length)
      const { levels, discriminating } = await storedLevels(topic, acked, codec, other)
      assert.ok(new Set(levels).size >= 3, `levels ${[...new Set(levels)].join(', ')}`)
      assert.ok(discriminating > 0, `the size tells levels apart for ${discriminating} of ${levels.length} batches`)
    })
  }
})

describe('zstd:adaptive with a CPU budget', () => {
  /**
   * 40 batches of 64 KiB sent at once, sealed on the event loop (compression threads 0), whose per-batch CPU
   * figure is the process's, not tick-grained like a thread's: each batch's measured cost meets the budget.
   */
  async function budgetRun(cpuBudgetSecondsPerGiB: number): Promise<number[]> {
    const topic = await kafka.createTopic(undefined, { partitions: 1 })
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        codec: parseCodecSpec('zstd:adaptive'),
        adaptiveLevel: { min: MIN_LEVEL, max: MAX_LEVEL, cpuBudgetSecondsPerGiB },
        compressionThreads: 0,
        lingerMs: 200,
        batchSizeBytes: 64 * 1024
      },
      { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log }
    )
    const acked: AckedBatch[] = []
    producer.onBatchAcked((b) => acked.push(b))
    await producer.start()
    try {
      const values = Array.from({ length: 16_000 }, (_, i) => logLine(i))
      await producer.sendMany(
        values.map((v, i) => ({ topic, key: null, value: Buffer.from(v), timestamp: RECENT_MS + i }))
      )
      await producer.flush()
      assert.equal(producer.snapshot().recordsAcked, values.length)
    } finally {
      await producer.close()
    }
    return (await storedLevels(topic, acked, 'zstd', (level) => (level === MIN_LEVEL ? MAX_LEVEL : MIN_LEVEL))).levels
  }

  it('a budget no level fits keeps the batches at the minimum; a generous one lets them climb to the maximum', async () => {
    // zstd:1 alone costs seconds per GiB: 0.001 fits nothing. 1,000 fits every level up to 6.
    const tight = await budgetRun(0.001)
    const generous = await budgetRun(1000)
    assert.ok(tight.length >= 20 && generous.length >= 20, `${tight.length} and ${generous.length} batches`)
    // From the default, 3, one step down per batch measured over the budget.
    assert.deepEqual(tight.slice(0, 3), [3, 2, 1])
    assert.ok(
      tight.slice(2).every((l) => l === MIN_LEVEL),
      `tight: ${tight.join(' ')}`
    )
    // Up one level per few batches measured within it, never down.
    assert.ok(
      generous.every((l, i) => i === 0 || l >= (generous[i - 1] as number)),
      `generous: ${generous.join(' ')}`
    )
    assert.equal(generous.at(-1), MAX_LEVEL, `generous: ${generous.join(' ')}`)
  })
})
