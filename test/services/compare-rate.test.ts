import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { isKnownRate, type KnownIngestRate } from '../../lib/compare/ingest-rate.js'
import { rfc3164Time } from '../../lib/generators/time-format.js'
import { useTestKafka } from '../helpers/kafka.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const DAY_S = 86_400

function compare(
  args: string[]
): Promise<{ code: number; stdout: string; stderr: string; report: CompareReportJson | undefined }> {
  const json = join(mkdtempSync(join(tmpdir(), 'squeeze-compare-rate-')), 'r.json')
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'compare', ...args, '--json', json, '--log-level', 'error', '--wide'],
      { env: { ...process.env, KAFKA_BROKERS: '' }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
        resolve({
          code,
          stdout,
          stderr,
          report: code === 0 ? (JSON.parse(readFileSync(json, 'utf8')) as CompareReportJson) : undefined
        })
      }
    )
  })
}

function knownRate(report: CompareReportJson | undefined): KnownIngestRate {
  const rate = report?.source.ingestRate
  assert.ok(rate !== undefined && isKnownRate(rate), `a known rate: ${JSON.stringify(rate)}`)
  return rate
}

function within(actual: number, expected: number, share: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= Math.abs(expected) * share,
    `${what}: ${actual} vs ${expected} (more than ${share * 100}% apart)`
  )
}

/** zstd:3's saving against none: the ingest rate x its saved share, once per replica on disk and once per consumer group in fetch traffic. */
function assertSavingsSplit(report: CompareReportJson | undefined, consumers: number): void {
  const none = report?.targets.find((x) => x.target === 'none')
  const zstd = report?.targets.find((x) => x.target === 'zstd:3')
  const saving = report?.savingsVsNone.targets.find((x) => x.target === 'zstd:3')
  assert.ok(none !== undefined && zstd !== undefined && saving !== undefined && report !== undefined)
  assert.equal(report.savingsVsNone.consumers, consumers)
  const perDay = knownRate(report).bytesPerSecond * DAY_S * (1 - zstd.storedBytes / none.storedBytes)
  within(
    saving.storedBytesPerDaySaved ?? NaN,
    perDay * report.settings.replicationFactor,
    1e-9,
    'disk bytes per day saved'
  )
  within(saving.fetchBytesPerDaySaved ?? NaN, perDay * consumers, 1e-9, 'fetch bytes per day saved')
  assert.ok(perDay > 0)
}

/** Bytes/day saved, against none and against what the topic stores, are the per-GiB savings at the run's own ingest rate. */
function assertPerDayFromRate(report: CompareReportJson | undefined): void {
  const gibPerDay = (knownRate(report).bytesPerSecond * DAY_S) / 1024 ** 3
  const rec = report?.recommendation
  assert.ok(
    typeof rec?.bytesPerDaySaved === 'number' && typeof rec.bytesSavedPerGiB === 'number' && rec.bytesPerDaySaved > 0,
    `bytes/day saved: ${JSON.stringify(rec)}`
  )
  within(rec.bytesPerDaySaved, rec.bytesSavedPerGiB * gibPerDay, 1e-9, 'bytes per day saved')
  const current = report?.current?.savings.find((x) => x.target === 'zstd:3')
  assert.ok(
    current?.storedBytesPerDaySaved != null &&
      current.fetchBytesPerDaySaved != null &&
      current.storedBytesPerDaySaved > 0,
    `bytes/day saved against current: ${JSON.stringify(current)}`
  )
  within(
    current.storedBytesPerDaySaved,
    current.storedBytesSavedPerGiB * gibPerDay,
    1e-9,
    'bytes per day saved on disk against current'
  )
  within(
    current.fetchBytesPerDaySaved,
    current.fetchBytesSavedPerGiB * gibPerDay,
    1e-9,
    'fetch bytes per day saved against current'
  )
}

function syslogLine(ms: number, i: number): string {
  return `${rfc3164Time(ms)} web-${i % 7} sshd[${1000 + (i % 97)}]: Accepted publickey for user${i % 13} from 10.0.${i % 250}.${(i * 7) % 250} port ${40000 + (i % 20000)} ssh2`
}

const kafka = useTestKafka()

describe("squeeze compare: bytes per day from the source's own ingest rate", () => {
  /** A topic holding 3,000 records stamped one every 1.2 s over the last hour, plus `extra` records. */
  async function topicOverTheLastHour(
    t: TestContext,
    now: number,
    extra: ReadonlyArray<{ at: number; ms: number }>
  ): Promise<string> {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    // lz4 today, so zstd:3 has something to save against what the topic stores.
    const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 } })
    const start = now - 3600_000
    for (let i = 0; i < 3000; i++) {
      for (const e of extra)
        if (e.at === i)
          await producer.send({ topic, key: null, value: Buffer.from(syslogLine(e.ms, i)), timestamp: e.ms })
      const ms = start + i * 1200
      await producer.send({
        topic,
        key: Buffer.from(`k${i % 5}`),
        value: Buffer.from(syslogLine(ms, i)),
        timestamp: ms
      })
    }
    await producer.close()
    return topic
  }

  it('a topic: the rate comes from broker offsets, and one record stamped years in the past changes neither it nor bytes/day', async (t) => {
    const now = Date.now()
    const clean = await topicOverTheLastHour(t, now, [])
    const withOutlier = await topicOverTheLastHour(t, now, [{ at: 1500, ms: Date.UTC(2019, 5, 1) }])
    const brokers = kafka.broker.brokers.join(',')
    const args = ['--targets', 'none,zstd:3', '--consumers', '3']
    const [a, b] = [
      await compare(['--brokers', brokers, '--topic', clean, ...args]),
      await compare(['--brokers', brokers, '--topic', withOutlier, ...args])
    ]
    assert.equal(a.code, 0, a.stderr)
    assert.equal(b.code, 0, b.stderr)
    const [rateA, rateB] = [knownRate(a.report), knownRate(b.report)]
    assert.equal(rateA.window.source, 'broker-offsets')
    assert.equal(rateA.window.lookbackSeconds, DAY_S)
    // The records' own timestamps (2,940 kept of 3,000, 1.2 s apart) give the rate, not when compare ran: exactly.
    within(rateA.recordsPerSecond, 1 / 1.2, 1e-9, 'records per second, as the records were stamped')
    // Counted by offsets, the outlier is one more record among the 3,000 (0.03% here), not years more of span.
    within(rateB.recordsPerSecond, rateA.recordsPerSecond, 1e-3, 'records per second with the outlier')
    // Bytes per record and the share zstd:3 saves are measured on the copy, whose batches linger.ms and the copier's
    // periodic commits cut by wall time (a loaded machine copies in smaller batches): so each run's bytes/day is
    // checked against its own rate, and only the rate, which the outlier could skew, across the runs.
    assertPerDayFromRate(a.report)
    assertPerDayFromRate(b.report)
    assert.ok(
      Date.parse(rateB.window.from) >= now - 3600_000,
      `the window starts within the hour: ${rateB.window.from}`
    )
    assert.match(b.stdout, /ingest rate: .* from broker offsets over the last 24 h: \d+ records stamped /)
    // Against none, disk (x replication factor 1) and fetch traffic (x 3 consumer groups) apart.
    assertSavingsSplit(a.report, 3)
    assert.match(
      a.stdout,
      /disk bytes\/day saved vs none \(x1 replica\) +fetch bytes\/day saved vs none \(x3 consumer groups\)/
    )
  })

  it('a --sample 48KiB projection: reads the budget plus at most a record per window, and takes the rate over the sampled span', async (t) => {
    const topic = await topicOverTheLastHour(t, Date.now(), [])
    // Records 1.2 s apart: only a long linger.ms batches them (each window then is one batch) for zstd:3 to save anything.
    const markdown = join(mkdtempSync(join(tmpdir(), 'squeeze-compare-rate-')), 'r.md')
    const run = await compare([
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      topic,
      '--mode',
      'projection',
      '--sample',
      '48KiB',
      '--sample-windows',
      '4',
      '--targets',
      'none,zstd:3',
      '--consumers',
      '2',
      '--markdown',
      markdown,
      '-X',
      'linger.ms=600000'
    ])
    assert.equal(run.code, 0, run.stderr)
    const plan = run.report?.projection?.sampling
    assert.ok(plan !== null && plan !== undefined)
    assert.equal(plan.requestedBytes, 48 * 1024)
    assert.equal(plan.requestedRecords, null)
    assert.equal(plan.windows.length, 8, 'four windows in each of two partitions')
    // A window stops at the record that fills its share; each record here is at most 2 + 120 bytes.
    assert.ok(
      plan.bytes >= 48 * 1024 && plan.bytes <= 48 * 1024 + plan.windows.length * 122,
      `${plan.bytes} record bytes read`
    )
    assert.equal(
      plan.windows.reduce((n, w) => n + w.bytes, 0),
      plan.bytes
    )
    assert.ok(plan.windows.reduce((n, w) => n + w.records, 0) < 3000 / 2, 'a sample, not the topic')
    assert.match(
      run.stdout,
      /\nsample: \d+ of 3000 records, 48\.\d+KiB of record bytes \(48\.0KiB of record bytes asked\) in 8 windows \(4 per partition x 2 partitions\)/
    )

    const rate = knownRate(run.report)
    assert.equal(rate.window.source, 'broker-offsets')
    assert.equal(rate.window.lookbackSeconds, null)
    assert.ok(
      Date.parse(rate.window.from) >= plan.fromMs && Date.parse(rate.window.to) <= plan.toMs,
      `rate window ${rate.window.from}..${rate.window.to} inside the sample's span`
    )
    within(rate.recordsPerSecond, 1 / 1.2, 0.05, 'records per second over the sampled span')
    assert.match(run.stdout, /ingest rate: .* from broker offsets over the sampled time span: \d+ records stamped /)
    assertSavingsSplit(run.report, 2)
    assert.match(
      readFileSync(markdown, 'utf8'),
      /## Bytes saved\n\nbytes saved per day at the ingest rate .*\n\n\| target \| disk bytes\/day saved vs none \(x1 replica\) \| fetch bytes\/day saved vs none \(x2 consumer groups\) \|/
    )
  })

  it("a file: bytes/day from the lines' own timestamps over days (across New Year), not from how fast compare replayed it", async () => {
    // 2,000 lines, one every 6 minutes from Dec 28: 8.3 days of syslog replayed in seconds.
    const start = Date.UTC(2024, 11, 28, 0, 0, 0)
    const file = join(mkdtempSync(join(tmpdir(), 'squeeze-compare-rate-')), 'syslog.log')
    writeFileSync(file, `${Array.from({ length: 2000 }, (_, i) => syslogLine(start + i * 360_000, i)).join('\n')}\n`)
    const result = await compare([
      '--brokers',
      kafka.broker.brokers.join(','),
      '--source',
      'file',
      '--file',
      file,
      '--kind',
      'syslog',
      '--targets',
      'none,zstd:3'
    ])
    assert.equal(result.code, 0, result.stderr)
    const report = result.report as CompareReportJson
    const rate = knownRate(report)
    assert.equal(rate.window.source, 'line-timestamps')
    assert.equal(rate.window.lookbackSeconds, null)
    within(rate.recordsPerSecond, 1 / 360, 0.01, 'records per second, one line per 6 minutes')
    within(
      (Date.parse(rate.window.to) - Date.parse(rate.window.from)) / 1000 / DAY_S,
      (1960 * 360) / DAY_S,
      0.01,
      'days the trimmed span covers'
    )
    const none = report.targets.find((x) => x.target === 'none')
    const zstd = report.targets.find((x) => x.target === 'zstd:3')
    assert.ok(none !== undefined && zstd !== undefined)
    within(rate.bytesPerRecord, none.uncompressedBytes / none.records, 1e-9, 'bytes per record as measured')
    const expected =
      rate.bytesPerSecond *
      DAY_S *
      (1 - zstd.storedBytes / none.storedBytes) *
      (report.settings.replicationFactor + report.settings.consumers)
    if (report.recommendation?.target === 'zstd:3')
      within(report.recommendation.bytesPerDaySaved ?? 0, expected, 1e-9, 'bytes per day saved')
    // A few KiB of lines a day saves well under a MiB a day, nowhere near the replay's TiB.
    assert.ok(
      (report.recommendation?.bytesPerDaySaved ?? Infinity) < 1024 ** 2,
      `bytes/day saved: ${report.recommendation?.bytesPerDaySaved}`
    )
  })

  it('a file whose lines carry no timestamp the format knows: the rate is unknown, and savings are per GiB of input', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'squeeze-compare-rate-')), 'journal.json')
    writeFileSync(
      file,
      `${Array.from({ length: 500 }, (_, i) => JSON.stringify({ MESSAGE: `started unit ${i}`, PRIORITY: '6', _PID: String(100 + i) })).join('\n')}\n`
    )
    const result = await compare([
      '--brokers',
      kafka.broker.brokers.join(','),
      '--source',
      'file',
      '--file',
      file,
      '--kind',
      'journald',
      '--targets',
      'none,zstd:3'
    ])
    assert.equal(result.code, 0, result.stderr)
    const rate = result.report?.source.ingestRate
    assert.deepEqual(rate, { unknown: 'no line timestamps to measure a rate from' })
    assert.equal(result.report?.recommendation?.bytesPerDaySaved, null)
    assert.ok((result.report?.recommendation?.bytesSavedPerGiB ?? 0) > 0)
    assert.match(result.stdout, /ingest rate: unknown \(no line timestamps to measure a rate from\)/)
    assert.match(result.stdout, /bytes saved per GiB of input vs none: /)
  })
})
