import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  CHANGE_MARGIN,
  currentBaseline,
  type BaselineContext,
  type CurrentBaseline
} from '../../../lib/compare/baseline.js'
import { isKnownRate } from '../../../lib/compare/ingest-rate.js'
import type { CompareReport } from '../../../lib/compare/compare-report.js'
import type { SourceBatchScan } from '../../../lib/compare/source-batches.js'
import { renderCompareMarkdown } from '../../../lib/report/compare-markdown.js'
import { renderCompareSvg } from '../../../lib/report/compare-svg.js'
import { renderCompareTable } from '../../../lib/report/compare-table.js'
import { sampleReport, sampleScan } from './sample-report.js'

const MIB = 1024 * 1024
const GIB = 1024 ** 3

function contextOf(report: CompareReport): BaselineContext {
  return {
    targets: report.targets,
    recommendation: report.recommendation,
    ingestRate: report.source.ingestRate,
    uncompressedBytesPerRecord: report.source.uncompressedBytes / report.source.records,
    replicationFactor: report.settings.replicationFactor,
    consumers: report.settings.consumers,
    lingerMs: report.settings.lingerMs,
    batchSizeBytes: report.settings.batchSizeBytes
  }
}

function withCurrent(report: CompareReport, scan: SourceBatchScan): CompareReport & { current: CurrentBaseline } {
  const current = currentBaseline(scan, contextOf(report))
  assert.ok(current !== null)
  return { ...report, current }
}

/** lz4 in 20,000 batches of 20 records, 2 KiB each: 40,960,000 bytes for what zstd:3 re-batched stores in 10 MiB. */
const SMALL_LZ4 = sampleScan({ codec: 'lz4', batches: 20_000, batchBytes: 2048, records: 20 })
const SMALL_LZ4_BYTES = 20_000 * 2048

function close(actual: number | null | undefined, expected: number, what: string): void {
  assert.ok(
    typeof actual === 'number' && Math.abs(actual - expected) <= Math.abs(expected) * 1e-12,
    `${what}: ${actual} vs ${expected}`
  )
}

describe('the current baseline: what the topic stores today, and each target against it', () => {
  it('a row from the source batches: codec, stored bytes summed, records per batch and the batch-size spread', () => {
    const { row } = withCurrent(sampleReport(), SMALL_LZ4).current
    assert.equal(row.label, 'current (as stored)')
    assert.equal(row.codec, 'lz4')
    assert.deepEqual(row.codecs, [{ codec: 'lz4', batches: 20_000, records: 400_000, storedBytes: SMALL_LZ4_BYTES }])
    assert.equal(row.storedBytes, SMALL_LZ4_BYTES)
    assert.equal(row.meanRecordsPerBatch, 20)
    assert.deepEqual(row.batchBytes, { p10: 2048, median: 2048, p90: 2048 })
    close(row.ratioVsNone, (100 * MIB) / SMALL_LZ4_BYTES, 'none stores this many times more')
  })

  it('savings against current follow from the rows: share of stored bytes, per day x replication factor and x consumers, per GiB', () => {
    const report = withCurrent(sampleReport(), SMALL_LZ4)
    const rate = report.source.ingestRate
    assert.ok(isKnownRate(rate))
    for (const [i, t] of report.targets.entries()) {
      const s = report.current.savings[i]
      assert.ok(s !== undefined && s.target === t.target)
      close(
        s.storedShare,
        t.storedBytes / t.records / (SMALL_LZ4_BYTES / 400_000),
        `${t.target} share of today's bytes`
      )
      const perDay = (rate.recordsPerSecond * 86_400 * (SMALL_LZ4_BYTES - t.storedBytes)) / 400_000
      close(s.storedBytesPerDaySaved, perDay * 3, `${t.target} on disk per day`)
      close(s.fetchBytesPerDaySaved, perDay * 2, `${t.target} fetch traffic per day`)
      // A day at the ingest rate is that many GiB of input.
      close(
        s.storedBytesSavedPerGiB * ((rate.bytesPerSecond * 86_400) / GIB),
        s.storedBytesPerDaySaved ?? NaN,
        `${t.target} per GiB and per day agree`
      )
    }
    const zstdShare = (10 * MIB) / SMALL_LZ4_BYTES
    assert.deepEqual(report.current.verdict, {
      action: 'change',
      target: 'zstd:3',
      storedShare: zstdShare,
      margin: CHANGE_MARGIN
    })
  })

  it("small batches: says batching is the limit, and splits zstd:3's gain with lz4 re-batched alone", () => {
    const report = withCurrent(sampleReport(), SMALL_LZ4)
    const [lz4Share, zstdShare] = [(20 * MIB) / SMALL_LZ4_BYTES, (10 * MIB) / SMALL_LZ4_BYTES]
    assert.deepEqual(report.current.batchingLimit, {
      medianBatchBytes: 2048,
      meanRecordsPerBatch: 20,
      thresholds: { medianBatchBytes: 16 * 1024, recordsPerBatch: 50 },
      lingerMs: 100,
      batchSizeBytes: 1_048_576,
      rebatched: { target: 'lz4:1', storedShare: lz4Share },
      split: { target: 'zstd:3', fromBatching: 1 - lz4Share, fromCodec: lz4Share - zstdShare }
    })
    const text = renderCompareTable(report)
    assert.match(
      text,
      /batching is the limit: today's batches are small \(median 2\.0KiB, under 16\.0KiB, or 20\.0 records per batch, under 50\); squeeze's targets were re-batched at linger\.ms\/batch\.size 100\/1048576\./
    )
    assert.match(text, /lz4:1 re-batched alone stores 0\.51x of today's bytes\./)
    assert.match(text, /of zstd:3's saving \(74% of today's bytes\), 49% comes from batching and 26% from the codec\./)
  })

  it('big batches that no front target beats by the margin: keep what you have, and the margin is stated', () => {
    const report = withCurrent(
      sampleReport(),
      sampleScan({ codec: 'zstd', batches: 100, batchBytes: 80 * 1024, records: 4000 })
    )
    assert.equal(report.current.batchingLimit, null)
    const { verdict } = report.current
    assert.ok(
      verdict.action === 'keep' && verdict.margin === 0.1 && verdict.best?.target === 'zstd:19',
      JSON.stringify(verdict)
    )
    close(verdict.best.storedShare, (7.5 * MIB) / (100 * 80 * 1024), "zstd:19's share of today's bytes")
    assert.match(
      renderCompareTable(report),
      /against current \(zstd\): keep what you have: no target on the ratio-vs-CPU front beats it by the margin; a change needs to store at most 0\.90x of today's bytes \(a 10% margin\); the best on the front, zstd:19, stores 0\.96x/
    )
  })

  it("batches 10x or more the targets' in records: said beside the verdict, with why in the projection's words or the copy's", () => {
    // The sample targets hold 4,000 records per batch; today's hold 50,000 (12.5x), then 4,000 (1x) and 20 (small).
    const big = withCurrent(
      sampleReport(),
      sampleScan({ codec: 'lz4', batches: 8, batchBytes: 4 * MIB, records: 50_000 })
    )
    assert.deepEqual(big.current.largerBatchesToday, {
      currentRecordsPerBatch: 50_000,
      targetRecordsPerBatch: 4000,
      factor: 12.5,
      lingerMs: 100,
      batchSizeBytes: 1_048_576
    })
    const said =
      /today's batches are larger: 50000\.0 records per batch, 13x the 4000\.0 of squeeze's targets, re-batched at linger\.ms\/batch\.size 100\/1\.00MiB; the targets' ratios are for their smaller batches\./
    assert.match(renderCompareTable(big), said)
    assert.match(
      renderCompareTable(big),
      /the copier batches on its own clock as it copies; -X linger\.ms and -X batch\.size set how it batches\./
    )
    const projected = renderCompareTable({ ...big, mode: 'projection' })
    assert.match(projected, said)
    assert.match(
      projected,
      /the projection closes batches on the records' own timestamps, and these advance more slowly than the topic's producer packed the records \(a backfill, a replay, or timestamps set to event time\); --linger-ms LIST shows longer lingers\./
    )
    assert.match(renderCompareMarkdown(big), said)
    for (const scan of [sampleScan({ codec: 'zstd', batches: 100, batchBytes: 80 * 1024, records: 4000 }), SMALL_LZ4]) {
      const report = withCurrent(sampleReport(), scan)
      assert.equal(report.current.largerBatchesToday, null)
      assert.doesNotMatch(renderCompareTable(report), /today's batches are larger/)
    }
  })

  it("producers that differ: a mix with each codec's share, and no split (no single codec to re-batch)", () => {
    const mixed = sampleScan(
      { codec: 'lz4', batches: 1000, batchBytes: 3 * 1024, records: 30 },
      { codec: 'none', batches: 1000, batchBytes: 2 * 1024, records: 10 }
    )
    const report = withCurrent(sampleReport(), {
      ...mixed,
      batches: [
        ...mixed.batches,
        { partition: 0, codec: null, records: 0, storedBytes: 78, uncompressedBytes: 78, decompressCpuSeconds: 0 }
      ]
    })
    const { row, batchingLimit } = report.current
    assert.equal(row.codec, 'mix')
    assert.deepEqual(
      row.codecs.map((c) => c.codec),
      ['lz4', 'none']
    )
    assert.equal(row.storedBytes, 1000 * 5 * 1024 + 78, 'a transaction marker is stored too')
    assert.equal(row.batches, 2000)
    assert.equal(batchingLimit?.rebatched, null)
    const text = renderCompareTable(report)
    assert.match(text, /current \(as stored\): mix of lz4 60%, none 40% of stored bytes/)
    assert.match(text, /add the current codec to --targets to split the gain/)
  })

  it('no trustworthy rate: savings against current per GiB of input, and the report says why', () => {
    const base = sampleReport()
    const report = withCurrent(
      { ...base, source: { ...base.source, ingestRate: { unknown: 'only 3 records stamped' } } },
      SMALL_LZ4
    )
    const zstd = report.current.savings.find((s) => s.target === 'zstd:3')
    assert.equal(zstd?.storedBytesPerDaySaved, null)
    assert.equal(zstd?.fetchBytesPerDaySaved, null)
    // 100 MiB of input per 400,000 records: a GiB of input is 4,194,304 records.
    close(
      zstd?.storedBytesSavedPerGiB,
      (GIB / ((100 * MIB) / 400_000)) * ((SMALL_LZ4_BYTES - 10 * MIB) / 400_000) * 3,
      'on disk per GiB of input'
    )
    assert.match(
      renderCompareTable(report),
      /change to zstd:3: it stores 0\.26x of what you store now, saving 892\.80MiB on disk \(x replication factor 3\) and 595\.20MiB of fetch traffic \(x 2 consumers\) per GiB of input \(no trustworthy ingest rate\)/
    )
  })

  it('comes first in the table, the markdown and the chart', () => {
    const report = withCurrent(sampleReport(), SMALL_LZ4)
    const table = renderCompareTable(report).split('\n')
    assert.match(table[0] ?? '', /stored vs current/)
    assert.match(table[2] ?? '', /^current \(as stored\): lz4 +400000 +20000 +20 .* 1\.00x /)
    assert.match(table.find((l) => l.startsWith('zstd:3 ')) ?? '', / 0\.26x /)
    const mdRows = renderCompareMarkdown(report)
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| :'))
    assert.ok(mdRows[1]?.startsWith('| current (as stored): lz4 |'), mdRows[1])
    assert.match(
      renderCompareMarkdown(report),
      /## Against what is stored today\n\n- current \(as stored\): lz4, 39\.06MiB in 20000 batches/
    )
    const svg = renderCompareSvg(report)
    assert.ok(svg.indexOf('class="current"') < svg.indexOf('class="target"'), 'the baseline is drawn first')
    assert.match(svg, />current \(as stored\): lz4</)
  })
})
