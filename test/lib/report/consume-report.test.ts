import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TopicMeasurement } from '../../../lib/consumer/measure-topics.js'
import { renderConsumeReport } from '../../../lib/report/consume-report.js'
import { formatRatio } from '../../../lib/report/table.js'

function measured(topic: string, storedBytes: number, uncompressedBytes: number): TopicMeasurement {
  return {
    topic,
    codecs: storedBytes === 0 ? [] : ['zstd'],
    records: storedBytes === 0 ? 0 : 1000,
    batches: storedBytes === 0 ? 0 : 2,
    storedBytes,
    uncompressedBytes,
    decompressCpuSeconds: 0.01,
    decodeCpuSeconds: 0.02,
    corruptRecords: 0,
    corruptBatches: 0,
    firstReadAt: 0,
    lastReadAt: 1000,
    diskBytes: 43_827
  }
}

describe('renderConsumeReport', () => {
  it('a topic with nothing read (a group already at the end) shows no ratio, not "-x" or "NaNx"', () => {
    const table = renderConsumeReport([measured('read', 10_000, 80_000), measured('at-end', 0, 0)], 'read')
    const [read, atEnd] = ['read', 'at-end'].map((t) => table.split('\n').find((l) => l.startsWith(`${t} `)) ?? '')
    assert.match(read ?? '', / 8\.00x +1\.00x /)
    assert.doesNotMatch(atEnd ?? '', /x\b|NaN/, atEnd)
    assert.match(atEnd ?? '', / - +- /)
  })

  it('formatRatio: two decimals and x, or - for no ratio', () => {
    assert.deepEqual(
      [formatRatio(8), formatRatio(1.2346, 3), formatRatio(Number.NaN), formatRatio(Infinity)],
      ['8.00x', '1.235x', '-', '-']
    )
  })

  it('fits an 80-column terminal with whole topic names: what the topic was read as and the bytes fetched go first', () => {
    const topics = ['prod.payments.http-access.v2', 'prod.payments.http-access.v2.zstd-3']
    const text = renderConsumeReport(
      topics.map((t) => ({ ...measured(t, 10_000, 80_000), format: 'http' })),
      undefined,
      { width: 80, wide: false }
    )
    for (const line of text.split('\n')) assert.ok(line.length <= 80, `${line.length}: ${line}`)
    assert.match(text, /^prod\.payments\.http-access\.v2 /m)
    assert.match(text, /^prod\.payments\S*~\S*\.zstd-3 /m)
    assert.match(text, /^topic +codec +records +ratio +decompress +decode +corrupt$/m)
    // Narrower still: names are cut shorter, keeping the ends that tell them apart.
    const narrow = renderConsumeReport(
      topics.map((t) => measured(t, 10_000, 80_000)),
      undefined,
      { width: 64, wide: false }
    )
    for (const line of narrow.split('\n')) assert.ok(line.length <= 64, `${line.length}: ${line}`)
    assert.match(narrow, /^prod\.\S*~\S*ss\.v2 /m)
    assert.match(narrow, /^prod\.\S*~\S*zstd-3 /m)
  })
})
