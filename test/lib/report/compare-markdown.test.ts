import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { COMPARE_HEADERS } from '../../../lib/report/compare-table.js'
import { renderCompareMarkdown } from '../../../lib/report/compare-markdown.js'
import { sampleReport, SAMPLE_TARGETS, target } from '../compare/sample-report.js'

/** The cells of a Markdown table row, honouring escaped pipes. */
function cells(row: string): string[] {
  return row.slice(2, -2).split(/(?<!\\) \| /)
}

/** The rows of the table under a `## heading`, the header row first. */
function tableUnder(doc: string, heading: string): string[] {
  const start = doc.indexOf(`\n## ${heading}\n`)
  const section = doc.slice(start + 1).split(/\n## /)[0] ?? ''
  return start < 0 ? [] : section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| :'))
}

describe('renderCompareMarkdown', () => {
  const md = renderCompareMarkdown(sampleReport())
  const tableRows = tableUnder(md, 'Results')

  it('has a table with the header, an alignment row and one row per target with every column', () => {
    assert.equal(tableRows.length, 1 + SAMPLE_TARGETS.length)
    assert.deepEqual(cells(tableRows[0]!), [...COMPARE_HEADERS])
    assert.ok(md.includes(`|${' :--- |'}${' ---: |'.repeat(COMPARE_HEADERS.length - 2)} :--- |`))
    for (const [i, t] of SAMPLE_TARGETS.entries()) {
      const row = cells(tableRows[i + 1]!)
      assert.equal(row[0], t.target)
      assert.equal(row.length, COMPARE_HEADERS.length)
    }
  })

  it('has the recommendation, source and settings sections with their figures', () => {
    assert.match(md, /^# squeeze compare: prod.access-logs$/m)
    assert.match(md, /## Recommendation\n\n\*\*zstd:3\*\* \(best-ratio-per-cpu\): zstd:3 is the knee/)
    assert.match(
      md,
      /\n- bytes\/day saved vs none: 6\.33GiB on disk \(x3 replicas\) \+ 4\.22GiB of fetch traffic \(x2 consumer groups\) = 10\.55GiB\/day\n/
    )
    assert.match(
      md,
      /\n- bytes saved per GiB of input vs none: 2\.70GiB on disk \(x3 replicas\) \+ 1\.80GiB of fetch traffic \(x2 consumer groups\) = 4\.50GiB\n/
    )
    assert.match(
      md,
      /- Ingest rate: 28\.4KiB\/s \(111\.11 records\/s x 262B\) from broker offsets over the last 24 h: 400000 records stamped 2025-06-01T11:00:00\.000Z to 2025-06-01T12:00:00\.000Z/
    )
    assert.match(md, /## Source\n[\s\S]*- Topic: `prod.access-logs`[\s\S]*- Records: 400000 in 6 partitions/)
    assert.match(md, /## Settings\n[\s\S]*- linger\.ms: 100\n- batch\.size: 1048576 bytes/)
  })

  it('keeps untrusted names from breaking the table or turning into markup', () => {
    const odd = target('zstd:3', 1024 * 1024, 2, { target: 'a|b*c*', topic: 'x' })
    const doc = renderCompareMarkdown({ ...sampleReport([odd]), recommendation: null })
    const rows = tableUnder(doc, 'Results')
    assert.equal(rows.length, 2)
    assert.equal(cells(rows[1]!).length, COMPARE_HEADERS.length)
    assert.ok(rows[1]!.startsWith('| a\\|b\\*c\\* |'))
    assert.match(doc, /No measured target meets the criteria/)
  })

  it('without a trustworthy ingest rate: says why, and gives the saving per GiB of input instead of per day', () => {
    const report = sampleReport()
    const doc = renderCompareMarkdown({
      ...report,
      source: { ...report.source, ingestRate: { unknown: 'only 3 records stamped between x and y' } },
      recommendation: { ...report.recommendation!, bytesPerDaySaved: null }
    })
    assert.match(doc, /- Ingest rate: unknown \(only 3 records stamped between x and y\)/)
    assert.match(doc, /- bytes\/day saved: unknown \(no trustworthy ingest rate/)
    assert.match(doc, /- bytes saved per GiB of input vs none: 2\.70GiB on disk/)
    assert.deepEqual(cells(tableUnder(doc, 'Bytes saved')[0]!), [
      'target',
      'disk bytes/GiB of input saved vs none (x3 replicas)',
      'fetch bytes/GiB of input saved vs none (x2 consumer groups)'
    ])
  })

  it('has a Bytes saved section: per target, disk and fetch traffic against none in their own columns', () => {
    const rows = tableUnder(md, 'Bytes saved')
    assert.equal(rows.length, 1 + SAMPLE_TARGETS.length)
    assert.deepEqual(cells(rows[0]!), [
      'target',
      'disk bytes/day saved vs none (x3 replicas)',
      'fetch bytes/day saved vs none (x2 consumer groups)'
    ])
    assert.deepEqual(cells(rows.find((r) => r.startsWith('| zstd:3 |'))!), ['zstd:3', '6.33GiB', '4.22GiB'])
    assert.match(
      md,
      /## Bytes saved\n\nbytes saved per day at the ingest rate \(2\.34GiB\/day uncompressed\), on disk across every replica and in fetch traffic once per consumer group\.\n\n\| target/
    )
  })
})
