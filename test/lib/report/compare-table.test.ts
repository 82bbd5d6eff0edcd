import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { renderCompareTable } from '../../../lib/report/compare-table.js'
import { sampleReport, SAMPLE_TARGETS, target } from '../compare/sample-report.js'

describe('renderCompareTable', () => {
  const text = renderCompareTable(sampleReport())
  const lines = text.split('\n')

  it('has a header with every measured column and one row per target, in report order', () => {
    for (const column of ['records', 'batches', 'rec/batch', 'uncompressed', 'stored per replica', 'stored all replicas', 'ratio', 'vs none', 'compress cpu s/GiB',
      'compress MB/s/core', 'decompress cpu s/GiB', 'decode cpu s/GiB', 'consumer rec/s', 'recompression']) {
      assert.ok(lines[0]?.includes(column), `missing column ${column}`)
    }
    const rows = lines.slice(2, 2 + SAMPLE_TARGETS.length)
    assert.deepEqual(rows.map((r) => r.split(/\s+/)[0]), SAMPLE_TARGETS.map((t) => t.target))
    const zstd3 = rows.find((r) => r.startsWith('zstd:3 '))
    assert.match(zstd3 ?? '', /10\.00MiB .*10\.00x .*10\.00x .*2\.00 +537 .*kept 100\/100/)
  })

  it('ends with the recommendation, its reason and the saving per day in human units', () => {
    assert.match(text, /\nrecommendation: zstd:3 \(best-ratio-per-cpu\)\n {2}zstd:3 is the knee/)
    // 123456789012 bytes is 114.98 GiB.
    assert.match(text, /bytes\/day saved vs none: 114\.98GiB\/day \(replication factor 3 \+ 2 consumers\)/)
    assert.match(text, /bytes saved per GiB of input vs none: 4\.50GiB \(replication factor 3 \+ 2 consumers\)/)
  })

  it('says which rate and window the daily saving rests on, or that the rate is unknown and why', () => {
    assert.match(text, /\n {2}ingest rate: 28\.4KiB\/s \(111\.11 records\/s x 262B\) from broker offsets over the last 24 h: 400000 records stamped 2025-06-01T11:00:00\.000Z to 2025-06-01T12:00:00\.000Z\n/)
    const report = sampleReport()
    const unknown = renderCompareTable({
      ...report,
      source: { ...report.source, ingestRate: { unknown: 'no line timestamps to measure a rate from' } },
      recommendation: { ...report.recommendation!, bytesPerDaySaved: null }
    })
    assert.match(unknown, /ingest rate: unknown \(no line timestamps to measure a rate from\)/)
    assert.match(unknown, /bytes\/day saved: unknown \(no trustworthy ingest rate/)
    assert.match(unknown, /bytes saved per GiB of input vs none: 4\.50GiB/)
  })

  it('says so when no target qualifies, or when there is no none target to measure savings against', () => {
    assert.match(renderCompareTable({ ...sampleReport(), recommendation: null }), /recommendation: none: no measured target meets the criteria/)
    const noNone = sampleReport(SAMPLE_TARGETS.slice(1))
    const withoutSaving = renderCompareTable({ ...noNone, recommendation: { ...noNone.recommendation!, bytesPerDaySaved: null, bytesSavedPerGiB: null } })
    assert.match(withoutSaving, /bytes\/day saved: unknown \(no none target/)
  })

  it('flags a target the broker recompressed, so its figures are not mistaken for the codec', () => {
    const recompressed = target('gzip:6', 1024 * 1024, 9, { recompression: { verdict: 'recompressed', batchesChecked: 10, batchesRewritten: 7 } })
    assert.match(renderCompareTable(sampleReport([recompressed])), /gzip:6 .*RECOMPRESSED 7\/10/)
  })

  it('shows large daily savings in TiB rather than thousands of GiB', () => {
    const big = { ...sampleReport(), recommendation: { ...sampleReport().recommendation!, bytesPerDaySaved: 5 * 1024 ** 4 } }
    assert.match(renderCompareTable(big), /5\.00TiB\/day/)
  })
})
