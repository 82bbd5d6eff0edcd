import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { readSweepInput } from '../../lib/sweep/sweep-input.js'
import type { BatchSizeResult, LevelResult } from '../../lib/sweep/codec-sweep.js'
import type { SamplingPlan } from '../../lib/compare/projection/sample-windows.js'
import { corpusPath } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'
import { freePort } from '../helpers/ports.js'
import { runSqueeze, type SqueezeRun } from '../helpers/squeeze-cli.js'

const FIXTURE = { file: 'access_apache_semicomplete_2015.log', kind: 'http' } as const
const RECORDS = 4000
const SWEEP = ['--codecs', 'none,gzip:6,snappy,lz4:1,zstd:3', '--batch-bytes', '65536', '--runs', '1']

interface BenchJson {
  readonly input: { readonly records: number; readonly sampling?: SamplingPlan | null }
  readonly settings: { readonly batches: number; readonly lingerMs?: number }
  readonly levels: readonly LevelResult[]
  readonly batchSizes: readonly BatchSizeResult[]
}

const kafka = useTestKafka()
let dir: string
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'squeeze-bench-topic-'))
})
after(async () => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

async function bench(args: readonly string[]): Promise<SqueezeRun & { report: BenchJson | undefined }> {
  const json = join(dir, `${Math.random().toString(36).slice(2)}.json`)
  const run = await runSqueeze(['bench', ...args, '--json', json, '--wide'])
  return { ...run, report: run.code === 0 ? (JSON.parse(readFileSync(json, 'utf8')) as BenchJson) : undefined }
}

/** The lines squeeze bench --file reads, sent to a one-partition topic in order, one millisecond apart (as the file sweep's clock). */
async function topicFromFixture(t: TestContext): Promise<{ topic: string; records: number }> {
  const { records } = await readSweepInput(corpusPath(FIXTURE.file), FIXTURE.kind, RECORDS)
  const topic = await kafka.createTopic(t, { partitions: 1 })
  const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 }, lingerMs: 5 })
  const start = Date.now() - 3_600_000
  await producer.sendMany(
    records.map((r, i) => ({ topic, partition: 0, key: r.key, value: r.value, timestamp: start + i }))
  )
  await producer.flush()
  return { topic, records: records.length }
}

/** The figures a sweep's batching decides; the MB/s columns are timings and differ run to run. */
function sizes(
  levels: readonly LevelResult[] | undefined
): Array<Pick<LevelResult, 'target' | 'uncompressedBytes' | 'compressedBytes' | 'ratio'>> {
  return (levels ?? []).map(({ target, uncompressedBytes, compressedBytes, ratio }) => ({
    target,
    uncompressedBytes,
    compressedBytes,
    ratio
  }))
}

/** The one line a failed command prints for a person (pino's JSON lines are for machines). */
function errorLines(run: SqueezeRun): string[] {
  return run.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))
}

describe('squeeze bench --topic', () => {
  it("sweeps the topic's batches: every codec's compressed bytes equal the file sweep's on the same records and batching", async (t) => {
    const { topic, records } = await topicFromFixture(t)
    const brokers = kafka.broker.brokers.join(',')
    const fromFile = await bench([
      '--file',
      corpusPath(FIXTURE.file),
      '--kind',
      FIXTURE.kind,
      '--records',
      String(RECORDS),
      ...SWEEP
    ])
    // linger.ms beyond the records' 4 s span: like the file sweep, batches close on batch.size alone.
    const fromTopic = await bench(['--topic', topic, '--brokers', brokers, '--linger-ms', '600000', ...SWEEP])
    assert.equal(fromFile.code, 0, fromFile.stderr)
    assert.equal(fromTopic.code, 0, fromTopic.stderr)
    assert.equal(fromTopic.report?.input.records, fromFile.report?.input.records)
    assert.equal(fromTopic.report?.settings.batches, fromFile.report?.settings.batches)
    assert.ok((fromTopic.report?.settings.batches ?? 0) > 5, `several batches: ${fromTopic.report?.settings.batches}`)
    // Same records, same offsets and timestamp deltas, same cuts: byte-identical batches, so identical sizes.
    assert.deepEqual(sizes(fromTopic.report?.levels), sizes(fromFile.report?.levels))
    assert.deepEqual(fromTopic.report?.batchSizes, fromFile.report?.batchSizes)
    assert.match(
      fromTopic.stdout,
      new RegExp(
        `^topic ${topic} \\(${records} records from the start, linger\\.ms 600000 on the records' timestamps\\): ${records} records`
      )
    )
    assert.match(fromTopic.stdout, /\nzstd:3 +\S+ +\d+\.\d{3}x/)
  })

  it('with --sample SIZE reads windows across the topic and says so in the report', async (t) => {
    const { topic } = await topicFromFixture(t)
    const run = await bench([
      '--topic',
      topic,
      '--brokers',
      kafka.broker.brokers.join(','),
      '--sample',
      '128KiB',
      '--sample-windows',
      '4',
      ...SWEEP
    ])
    assert.equal(run.code, 0, run.stderr)
    const plan = run.report?.input.sampling
    assert.ok(plan !== null && plan !== undefined)
    assert.equal(plan.requestedBytes, 128 * 1024)
    assert.equal(plan.windows.length, 4)
    assert.ok(
      plan.bytes >= 128 * 1024 && plan.bytes < 128 * 1024 + 4 * 2048,
      `${plan.bytes} record bytes read for 128 KiB in 4 windows`
    )
    assert.equal(run.report?.levels.length, 5)
    assert.match(run.stdout, /records sampled in 4 windows/)
  })

  it('an unknown topic or an unreachable broker: one clear line and a nonzero exit', async () => {
    const brokers = kafka.broker.brokers.join(',')
    const missing = await bench(['--topic', 'no-such-topic', '--brokers', brokers, ...SWEEP])
    assert.equal(missing.code, 1)
    assert.deepEqual(
      errorLines(missing),
      [`squeeze: topic no-such-topic not found on ${brokers} [SQUEEZE_ERR_SOURCE]`],
      missing.stderr
    )

    const port = await freePort()
    const unreachable = await bench(['--topic', 'logs', '--brokers', `127.0.0.1:${port}`, ...SWEEP])
    assert.notEqual(unreachable.code, 0)
    assert.equal(errorLines(unreachable).length, 1, unreachable.stderr)
    assert.match(
      errorLines(unreachable)[0] as string,
      new RegExp(`^squeeze: cannot reach any Kafka broker at 127\\.0\\.0\\.1:${port}: .*check --brokers`)
    )
  })
})
