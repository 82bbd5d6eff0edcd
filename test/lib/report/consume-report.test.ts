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
})
