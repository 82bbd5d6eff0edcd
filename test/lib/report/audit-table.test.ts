import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AuditReport, AuditTopic, TopicFacts } from '../../../lib/audit/audit-report.js'
import type { FormatRow } from '../../../lib/compare/format-rows.js'
import { rank } from '../../../lib/audit/run-audit.js'
import { auditApplyAs } from '../../../lib/audit/audit-apply.js'
import { renderAuditSettings } from '../../../lib/report/audit-apply.js'
import { renderAuditMarkdown } from '../../../lib/report/audit-markdown.js'
import { renderAuditSvg } from '../../../lib/report/audit-svg.js'
import { renderAuditTable } from '../../../lib/report/audit-table.js'
import { WIDE } from '../../../lib/report/terminal.js'
import { DEFAULT_WIDTH } from '../../../lib/terminal/width.js'
import { sampleReportWithToday } from '../compare/sample-report.js'

const GIB = 1024 ** 3

function facts(topic: string): TopicFacts {
  return {
    topic,
    partitions: 6,
    replicationFactor: 3,
    retentionMs: 604_800_000,
    retentionBytes: -1,
    cleanupPolicy: 'delete',
    compressionType: 'producer',
    compressionTypeSource: 'default',
    records: 1000,
    groups: ['g']
  }
}

function topic(name: string, savedGiB: number, status: AuditTopic['status'] = 'audited'): AuditTopic {
  return {
    topic: name,
    status,
    error: status === 'failed' ? `fetch failed on ${name}: ${'a long reason '.repeat(12)}` : null,
    facts: facts(name),
    compacted: false,
    brokerRecompresses: false,
    sample: { records: 1000, bytes: 100_000, batches: 20, projectedBatches: 20 },
    ingestBytesPerSecond: 1000,
    ingestRateNote: null,
    current: {
      codec: 'lz4',
      codecs: [{ codec: 'lz4', batches: 20, records: 1000, storedBytes: 50_000 }],
      ratio: 2,
      meanRecordsPerBatch: 50,
      medianBatchBytes: 2500,
      decompressCpuSecondsPerGiB: 1
    },
    targets: [
      {
        target: 'zstd:3',
        ratio: 3,
        ratioLow: 2.9,
        ratioHigh: 3.1,
        storedShare: 0.66,
        compressCpuSecondsPerGiB: 5,
        decompressCpuSecondsPerGiB: 1
      }
    ],
    verdict: { action: 'change', target: 'zstd:3' },
    savings: {
      diskBytesPerDay: savedGiB * GIB,
      fetchBytesPerDay: 0,
      steadyStateDiskBytes: savedGiB * 7 * GIB,
      cpuSecondsPerDay: 10,
      money: { storage: savedGiB, transfer: 0, cpu: 0.01, net: savedGiB - 0.01 }
    },
    applyAs: null,
    wallSeconds: 1
  }
}

function report(topics: AuditTopic[]): AuditReport {
  return {
    generatedAt: new Date(0).toISOString(),
    squeezeVersion: 'test',
    brokers: ['127.0.0.1:9092'],
    settings: {
      sampleBytes: 16 * 1024 * 1024,
      targets: ['none', 'zstd:3'],
      threads: 2,
      margin: 0.1,
      topicsPattern: null,
      excludePattern: null,
      clients: [],
      consumersOverride: null,
      replicationFactorOverride: null
    },
    prices: { storageGiBMonth: 0.1, transferGiB: 0.02, coreHour: 0.05, currency: 'USD', source: null },
    partial: true,
    stoppedBy: null,
    wallSeconds: 1,
    topics: rank(topics),
    totals: {
      topics: topics.length,
      audited: 2,
      toChange: 2,
      failed: 1,
      cut: 0,
      notReached: 0,
      diskBytesPerDay: 3 * GIB,
      fetchBytesPerDay: 0,
      steadyStateDiskBytes: 21 * GIB,
      cpuSecondsPerDay: 20,
      money: { storage: 3, transfer: 0, cpu: 0.02, net: 2.98 }
    }
  }
}

describe('audit table', () => {
  it('ranks audited topics by what they save, lists the rest after them, and fits 100 columns however long the names and errors', () => {
    const long = `payments.${'very-long-topic-name.'.repeat(6)}events`
    const r = report([topic('small', 1), topic(long, 2), topic('broken', 0, 'failed')])
    assert.deepEqual(
      r.topics.map((t) => t.topic),
      [long, 'small', 'broken']
    )
    const text = renderAuditTable(r)
    for (const line of text.split('\n')) assert.ok(line.length <= DEFAULT_WIDTH, `${line.length}: ${line}`)
    assert.match(text, /^payments\.very-long\S*~\S*-name\.events +lz4 +zstd:3 +-34% +2\.00 +1\.99/m)
    // An 80-column terminal: every line fits, and names cut in the middle keep the end that tells them apart.
    const copies = report([topic(`${long}.zstd-1`, 2), topic(`${long}.zstd-3`, 1)])
    const narrow = renderAuditTable(copies, { width: 80, wide: false })
    for (const line of narrow.split('\n')) assert.ok(line.length <= 80, `${line.length}: ${line}`)
    assert.match(narrow, /^payments\.~nts\.zstd-1 /m)
    assert.match(narrow, /^payments\.~nts\.zstd-3 /m)
    // Wide: whole names.
    assert.ok(renderAuditTable(copies, WIDE).includes(`${long}.zstd-3`))
    assert.match(text, /broken +lz4 +FAILED +- +- +-\n/)
    assert.match(text, /^PARTIAL/m)
    assert.match(renderAuditMarkdown(r), /\| small \| audited \| 6 \| 3 \|/)
    assert.equal((renderAuditSvg(r).match(/class="saving"/g) ?? []).length, 2, 'one bar per topic that saves something')
    assert.doesNotMatch(text, /counted per topic/, 'no override, no note')
  })

  it('names the topics --max-duration cut and skipped, and says what ended the pass, in every format', () => {
    const unmeasured = { sample: null, current: null, targets: [], verdict: null, savings: null }
    const cut: AuditTopic = {
      ...topic('big', 0, 'cut'),
      ...unmeasured,
      error: 'cut: --max-duration (3 s) ended the pass (12.0 MiB of its sample read)',
      cutAfterBytes: 12 * 1024 * 1024
    }
    const r = report([topic('small', 1), cut, { ...topic('later', 0, 'not-reached'), ...unmeasured }])
    const stopped: AuditReport = {
      ...r,
      stoppedBy: 'max-duration',
      totals: { ...r.totals, audited: 1, failed: 0, cut: 1, notReached: 1 }
    }
    const text = renderAuditTable(stopped)
    for (const line of text.split('\n')) assert.ok(line.length <= DEFAULT_WIDTH, `${line.length}: ${line}`)
    assert.match(text, /^big +- +CUT +- +- +-$/m)
    assert.match(text, /^later +- +skipped +- +- +-$/m)
    assert.match(text, /^ {2}big: cut: --max-duration \(3 s\) ended the pass \(12\.0 MiB of its sample read\)$/m)
    assert.match(
      text,
      /^PARTIAL: --max-duration ended the pass: 1 cut while read or projected, 1 skipped \(not started\)$/m
    )
    const markdown = renderAuditMarkdown(stopped)
    assert.match(markdown, /^\| big \| cut \|/m)
    assert.match(markdown, /^\| later \| not-reached \|/m)
    assert.match(markdown, /^\*\*Partial:\*\* --max-duration ended the pass: 1 cut while read or projected, 1 skipped/m)
  })

  it("notes what a topic of HTTP records would store as log lines and as JSON, against its Cap'n Proto records", () => {
    const row = (format: 'text' | 'json', storedVsRecords: number): FormatRow => ({
      format,
      target: 'zstd:3',
      records: 1000,
      batches: 10,
      uncompressedBytes: 200_000,
      storedBytes: 20_000,
      ratio: 10,
      storedVsRecords,
      decompressCpuSecondsPerGiB: 1,
      decodeCpuSecondsPerGiB: 2,
      skippedRecords: 0
    })
    const r = report([
      { ...topic('access', 1), formats: [row('text', 0.5427), row('json', 0.9674)] },
      topic('plain', 1)
    ])
    const note = "  access: as text lines 0.54x, as JSON 0.97x the Cap'n Proto records' bytes (at zstd:3)"
    assert.ok(renderAuditTable(r).split('\n').includes(note), renderAuditTable(r))
    assert.match(renderAuditMarkdown(r), /^- access: as text lines 0\.54x, as JSON 0\.97x .* \(at zstd:3\)$/m)
    assert.doesNotMatch(renderAuditTable(r), /plain: as text/)
  })

  it('says when --replication-factor and --consumers replace the facts of every topic', () => {
    const r = report([topic('small', 1)])
    const overridden = { ...r, settings: { ...r.settings, replicationFactorOverride: 3, consumersOverride: 2 } }
    assert.match(renderAuditTable(overridden), /^audit of .*; counted per topic: 3 replicas, 2 groups$/m)
    assert.match(renderAuditMarkdown(overridden), /; counted per topic: 3 replicas, 2 groups\.$/m)
  })

  it("names the clients that cannot set a topic's target in a note within 100 columns; settings on request", () => {
    const apply = auditApplyAs(sampleReportWithToday(), facts('small'), {
      clients: ['java', 'librdkafka', 'filebeat'],
      brokers: '127.0.0.1:9092',
      change: true
    })
    const long = `payments.${'very-long-topic-name.'.repeat(6)}events`
    const r = report([
      { ...topic('small', 1), applyAs: apply },
      { ...topic(long, 2), applyAs: apply }
    ])
    const text = renderAuditTable(r)
    for (const line of text.split('\n')) assert.ok(line.length <= DEFAULT_WIDTH, `${line.length}: ${line}`)
    assert.match(text, /^ {2}small: zstd:\d+ is beyond filebeat \(gzip:\d, \d+\.\d\dx\)$/m)
    assert.doesNotMatch(text, /java \(|librdkafka \(/, 'clients that can set the target are not named')
    const hint = renderAuditSettings(r, false, 1)
    assert.equal(hint, 'settings per client: --json, --markdown; --show-settings prints 1 of 2 topics\n')
    const shown = renderAuditSettings(r, true, 1)
    assert.match(shown, new RegExp(`^\\n${long.replaceAll('.', '\\.')}: change to zstd:3\\n`))
    assert.doesNotMatch(shown, /^small: change to/m, 'only the top topic')
    assert.match(
      shown,
      /^java \(zstd:3, properties\):\nbootstrap\.servers=127\.0\.0\.1:9092\ncompression\.type=zstd\n/m
    )
    assert.equal(renderAuditSettings(report([topic('small', 1)]), true, 3), '', 'nothing without settings')
    const markdown = renderAuditMarkdown(r)
    assert.match(markdown, /^## small: settings per client$/m)
    assert.match(markdown, /^\| filebeat \| gzip:\d \| ratio [\d.]+x \| filebeat cannot set zstd:3; /m)
    assert.match(markdown, /```yaml\noutput\.kafka:/)
  })
})
