import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { currentBaseline } from '../../../lib/compare/baseline.js'
import type { KnownIngestRate } from '../../../lib/compare/ingest-rate.js'
import { renderCompareTable } from '../../../lib/report/compare-table.js'
import { formatLargeBytes } from '../../../lib/report/table.js'
import { sampleReport, sampleScan, SAMPLE_TARGETS, target, sampleBaselineContext } from '../compare/sample-report.js'

describe('renderCompareTable', () => {
  const text = renderCompareTable(sampleReport())
  const lines = text.split('\n')

  it('has a header with every measured column and one row per target, in report order', () => {
    for (const column of [
      'records',
      'batches',
      'rec/batch',
      'uncompressed',
      'stored per replica',
      'stored all replicas',
      'ratio',
      'vs none',
      'compress cpu s/GiB',
      'compress MB/s/core',
      'decompress cpu s/GiB',
      'decode cpu s/GiB',
      'consumer rec/s',
      'recompression'
    ]) {
      assert.ok(lines[0]?.includes(column), `missing column ${column}`)
    }
    const rows = lines.slice(2, 2 + SAMPLE_TARGETS.length)
    assert.deepEqual(
      rows.map((r) => r.split(/\s+/)[0]),
      SAMPLE_TARGETS.map((t) => t.target)
    )
    const zstd3 = rows.find((r) => r.startsWith('zstd:3 '))
    assert.match(zstd3 ?? '', /10\.00MiB .*10\.00x .*10\.00x .*2\.00 +537 .*kept 100\/100/)
  })

  it('ends with the recommendation, its reason and the saving per day in human units', () => {
    assert.match(text, /\nrecommendation: zstd:3 \(best-ratio-per-cpu\)\n {2}zstd:3 is the knee/)
    // 2.34375 GiB/day of input, zstd:3 saving 90% of it: x3 replicas on disk, x2 consumer groups in fetch traffic.
    assert.match(
      text,
      /bytes\/day saved vs none: 6\.33GiB on disk \(x3 replicas\) \+ 4\.22GiB of fetch traffic \(x2 consumer groups\) = 10\.55GiB\/day\n/
    )
    assert.match(
      text,
      /bytes saved per GiB of input vs none: 2\.70GiB on disk \(x3 replicas\) \+ 1\.80GiB of fetch traffic \(x2 consumer groups\) = 4\.50GiB$/
    )
  })

  it('says which rate and window the daily saving rests on, or that the rate is unknown and why', () => {
    assert.match(
      text,
      /\n {2}ingest rate: 28\.4KiB\/s \(111\.11 records\/s x 262B\) from broker offsets over the last 24 h: 400000 records stamped 2025-06-01T11:00:00\.000Z to 2025-06-01T12:00:00\.000Z\n/
    )
    const report = sampleReport()
    const unknown = renderCompareTable({
      ...report,
      source: { ...report.source, ingestRate: { unknown: 'no line timestamps to measure a rate from' } },
      recommendation: { ...report.recommendation!, bytesPerDaySaved: null }
    })
    assert.match(unknown, /ingest rate: unknown \(no line timestamps to measure a rate from\)/)
    assert.match(unknown, /bytes\/day saved: unknown \(no trustworthy ingest rate/)
    assert.match(
      unknown,
      /bytes saved per GiB of input vs none: 2\.70GiB on disk \(x3 replicas\) \+ 1\.80GiB of fetch traffic/
    )
  })

  it('says so when no target qualifies, or when there is no none target to measure savings against', () => {
    assert.match(
      renderCompareTable({ ...sampleReport(), recommendation: null }),
      /recommendation: none: no measured target meets the criteria/
    )
    const noNone = sampleReport(SAMPLE_TARGETS.slice(1))
    const withoutSaving = renderCompareTable({
      ...noNone,
      recommendation: { ...noNone.recommendation!, bytesPerDaySaved: null, bytesSavedPerGiB: null }
    })
    assert.match(withoutSaving, /bytes\/day saved: unknown \(no none target/)
  })

  it('flags a target the broker recompressed, so its figures are not mistaken for the codec', () => {
    const recompressed = target('gzip:6', 1024 * 1024, 9, {
      recompression: { verdict: 'recompressed', batchesChecked: 10, batchesRewritten: 7 }
    })
    assert.match(renderCompareTable(sampleReport([recompressed])), /gzip:6 .*RECOMPRESSED 7\/10/)
  })

  it('shows large daily savings in TiB rather than thousands of GiB', () => {
    const report = sampleReport()
    const rate = report.source.ingestRate as KnownIngestRate
    // zstd:3 saves 90% of the input, counted 3 + 2 times: 5 TiB a day.
    const big = {
      ...report,
      source: { ...report.source, ingestRate: { ...rate, bytesPerSecond: (5 * 1024 ** 4) / 86_400 / 0.9 / 5 } }
    }
    assert.match(renderCompareTable(big), /= 5\.00TiB\/day\n/)
  })

  it('has a savings table: per target, bytes saved against none on disk (x replicas) and in fetch traffic (x consumer groups) apart', () => {
    assert.match(
      text,
      /\nbytes saved per day at the ingest rate \(2\.34GiB\/day uncompressed\), on disk across every replica and in fetch traffic once per consumer group:\n/
    )
    assert.match(
      text,
      /\ntarget +disk bytes\/day saved vs none \(x3 replicas\) +fetch bytes\/day saved vs none \(x2 consumer groups\)\n/
    )
    assert.match(text, /\nnone +0B +0B\n/)
    assert.match(text, /\nzstd:3 +6\.33GiB +4\.22GiB\n/)
    assert.match(text, /\nlz4:1 +5\.63GiB +3\.75GiB\n/)

    const report = sampleReport()
    const unknown = renderCompareTable({
      ...report,
      source: { ...report.source, ingestRate: { unknown: 'no line timestamps to measure a rate from' } }
    })
    assert.match(unknown, /\nbytes saved per GiB of input \(no trustworthy ingest rate\)/)
    assert.match(
      unknown,
      /\ntarget +disk bytes\/GiB of input saved vs none \(x3 replicas\) +fetch bytes\/GiB of input saved vs none \(x2 consumer groups\)\n/
    )
    assert.match(unknown, /\nzstd:3 +2\.70GiB +1\.80GiB\n/)

    const context = sampleBaselineContext(report)
    const current = currentBaseline(
      sampleScan({ codec: 'lz4', batches: 20_000, batchBytes: 2048, records: 20 }),
      context
    )
    const saving = current?.savings.find((x) => x.target === 'zstd:3')
    assert.ok(saving?.storedBytesPerDaySaved != null && saving.fetchBytesPerDaySaved != null)
    const withCurrent = renderCompareTable({ ...report, current })
    assert.match(
      withCurrent,
      / +disk bytes\/day saved vs current \(x3 replicas\) +fetch bytes\/day saved vs current \(x2 consumer groups\)\n/
    )
    assert.match(
      withCurrent,
      new RegExp(
        `\\nzstd:3 +6\\.33GiB +4\\.22GiB +${formatLargeBytes(saving.storedBytesPerDaySaved).replace('.', '\\.')} +${formatLargeBytes(saving.fetchBytesPerDaySaved).replace('.', '\\.')}\\n`
      )
    )
  })
})
