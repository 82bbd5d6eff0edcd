import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Ajv } from 'ajv'
import type { CurrentBaseline } from '../../lib/compare/baseline.js'
import { isKnownRate } from '../../lib/compare/ingest-rate.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { corpusLines } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'
import { repoRoot } from '../helpers/repo-root.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const GIB = 1024 ** 3
const SCHEMA = JSON.parse(readFileSync(join(repoRoot(), 'schema', 'compare-report.schema.json'), 'utf8')) as object

const kafka = useTestKafka()

function bootstrap(): string {
  const first = kafka.broker.brokers[0]
  assert.ok(first !== undefined)
  return first
}

/** librdkafka's command-line producer: one record per stdin line, `key<TAB>value`. */
function kcat(args: readonly string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', ['-P', '-b', bootstrap(), ...args], { stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', (err) =>
      reject(new Error(`kcat did not start (bash scripts/ensure-apt.sh kcat): ${err.message}`))
    )
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`kcat exited ${code}: ${stderr.slice(-2000)}`))
    )
    child.stdin.end(input)
  })
}

/** What Kafka's own LogDirsCommand says one replica of the topic holds, summed over its partitions. */
async function logDirsBytes(topic: string): Promise<number> {
  const { code, stdout, stderr } = await runKafkaJavaTool(
    KafkaMainClasses.LOG_DIRS,
    ['--bootstrap-server', bootstrap(), '--describe', '--topic-list', topic],
    { timeoutMs: 60_000 }
  )
  assert.equal(code, 0, stderr.slice(-2000))
  const answer = JSON.parse(stdout.trim().split('\n').pop() ?? '') as {
    brokers: Array<{ logDirs: Array<{ partitions: Array<{ partition: string; size: number }> }> }>
  }
  const sizes = answer.brokers
    .flatMap((b) => b.logDirs.flatMap((d) => d.partitions))
    .filter((p) => p.partition.startsWith(`${topic}-`))
  assert.ok(sizes.length > 0, `LogDirsCommand lists ${topic}: ${stdout.slice(-500)}`)
  return sizes.reduce((n, p) => n + p.size, 0)
}

async function compare(
  topic: string,
  targets: string
): Promise<{ report: CompareReportJson; current: CurrentBaseline; stdout: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-compare-baseline-'))
  const result = await runSqueeze([
    'compare',
    '--wide',
    '--brokers',
    bootstrap(),
    '--topic',
    topic,
    '--targets',
    targets,
    '--json',
    join(dir, 'r.json'),
    '--markdown',
    join(dir, 'r.md'),
    '--chart',
    join(dir, 'r.svg'),
    '--log-level',
    'error'
  ])
  assert.equal(result.code, 0, result.stderr)
  const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as CompareReportJson
  const ajv = new Ajv({ allErrors: true })
  assert.ok(ajv.validate(SCHEMA, report), JSON.stringify(ajv.errors))
  assert.ok(report.current !== undefined && report.current !== null, 'a baseline row')
  return { report, current: report.current, stdout: result.stdout, dir }
}

/** Every target against current follows from the two rows, per record, and per GiB of input scales to per day by the rate. */
function assertSavingsFollowFromRows(report: CompareReportJson, current: CurrentBaseline): void {
  const { replicationFactor: rf, consumers } = report.settings
  const currentPerRecord = current.row.storedBytes / current.row.records
  const recordsPerGiB = GIB / (report.source.uncompressedBytes / report.source.records)
  for (const [i, t] of report.targets.entries()) {
    const s = current.savings[i]
    assert.ok(s !== undefined && s.target === t.target)
    const close = (actual: number | null, expected: number, what: string): void =>
      assert.ok(
        actual !== null && Math.abs(actual - expected) <= Math.abs(expected) * 1e-9 + 1e-6,
        `${t.target} ${what}: ${actual} vs ${expected}`
      )
    close(s.storedShare, t.storedBytes / t.records / currentPerRecord, "share of today's stored bytes")
    const savedPerRecord = currentPerRecord - t.storedBytes / t.records
    close(s.storedBytesSavedPerGiB, recordsPerGiB * savedPerRecord * rf, 'on disk per GiB of input')
    close(s.fetchBytesSavedPerGiB, recordsPerGiB * savedPerRecord * consumers, 'fetch traffic per GiB of input')
    const rate = report.source.ingestRate
    if (isKnownRate(rate))
      close(s.storedBytesPerDaySaved, rate.recordsPerSecond * 86_400 * savedPerRecord * rf, 'on disk per day')
    else assert.equal(s.storedBytesPerDaySaved, null)
  }
}

describe('squeeze compare: the "current (as stored)" baseline, from the source\'s own batches', () => {
  it('kcat, lz4 at a short linger: the baseline is lz4, stores exactly what LogDirsCommand reports, and batching is named as the limit', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 3 })
    const lines = corpusLines('access_apache_semicomplete_2015.log').slice(0, 3000)
    // Small batches as a quiet producer makes them: 5 ms of linger, at most 25 records a batch.
    await kcat(
      ['-t', topic, '-z', 'lz4', '-X', 'linger.ms=5', '-X', 'batch.num.messages=25', '-K', '\t'],
      lines.map((l, i) => `host-${i % 37}\t${l}`).join('\n') + '\n'
    )
    const { report, current, stdout, dir } = await compare(topic, 'none,lz4,zstd:3')
    assert.equal(report.source.records, 3000)
    assert.equal(current.row.codec, 'lz4')
    assert.deepEqual(
      current.row.codecs.map((c) => c.codec),
      ['lz4']
    )
    assert.equal(current.row.records, 3000)
    assert.ok(current.row.meanRecordsPerBatch <= 25, `records per batch: ${current.row.meanRecordsPerBatch}`)
    assert.equal(
      current.row.storedBytes,
      await logDirsBytes(topic),
      "stored bytes: the sum of the source batches' sizes is the log's size"
    )
    assertSavingsFollowFromRows(report, current)
    const limit = current.batchingLimit
    assert.ok(limit !== null, 'batches of 25 records are small')
    assert.equal(limit.rebatched?.target, 'lz4:1', "the current codec at librdkafka's default level")
    assert.ok(
      limit.rebatched.storedShare < 1,
      `lz4 re-batched stores less than lz4 in batches of 25: ${limit.rebatched.storedShare}`
    )
    assert.match(
      stdout,
      /batching is the limit: .* squeeze's targets were re-batched at linger\.ms\/batch\.size \d+\/\d+\./
    )
    assert.match(stdout, /lz4:1 re-batched alone stores \d\.\d\dx of today's bytes\./)
    const tableRows = stdout.split('\n')
    assert.match(tableRows[2] ?? '', /^current \(as stored\): lz4 +3000 /, 'first row of the table')
    assert.match(
      stdout,
      /against current \(lz4\): (change to \S+: it stores \d\.\d\dx of what you store now|keep what you have)/
    )
    const mdRows = readFileSync(join(dir, 'r.md'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| :'))
    assert.ok(mdRows[1]?.startsWith('| current (as stored): lz4 |'), mdRows[1])
    assert.match(
      readFileSync(join(dir, 'r.svg'), 'utf8'),
      /<line class="current"[^>]*\/>\n<text class="current-label"[^>]*>current \(as stored\): lz4</
    )
  })

  // --compression-codec: ConsoleProducer sets compression.type itself, over a --producer-property compression.type.
  it('Java ConsoleProducer with gzip: the baseline is gzip and its stored bytes are exact', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const lines = corpusLines('nginx_error_chemfh_2023.log')
    const { code, stderr } = await runKafkaJavaTool(
      KafkaMainClasses.CONSOLE_PRODUCER,
      [
        '--bootstrap-server',
        bootstrap(),
        '--topic',
        topic,
        '--compression-codec',
        'gzip',
        '--producer-property',
        'linger.ms=5'
      ],
      { timeoutMs: 60_000, input: `${lines.join('\n')}\n` }
    )
    assert.equal(code, 0, stderr.slice(-2000))
    const { report, current } = await compare(topic, 'none,gzip,zstd:3')
    assert.equal(current.row.codec, 'gzip')
    assert.equal(current.row.records, lines.length)
    assert.equal(report.source.records, lines.length)
    assert.equal(current.row.storedBytes, await logDirsBytes(topic))
    assertSavingsFollowFromRows(report, current)
  })
})
