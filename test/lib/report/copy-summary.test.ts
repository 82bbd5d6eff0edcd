import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CopierStats } from '../../../lib/copier/copier-config.js'
import { copySummary } from '../../../lib/report/copy-summary.js'

const stats: CopierStats = {
  sourceRecords: 5000,
  sourceBytes: 1_000_000,
  commits: 12,
  aborts: 0,
  refused: 0,
  fencedCommits: 0,
  skippedBatches: 0,
  firstTimestamp: 0,
  lastTimestamp: 0,
  decompressCpuSeconds: 0
}
const targets = [
  { spec: { codec: 'zstd' as const, level: 3 }, topic: 'logs.zstd-3' },
  { spec: { codec: 'lz4' as const, level: 1 }, topic: 'logs.lz4-1' }
]

describe("copy's closing summary", () => {
  it('names every destination and the commits, and nothing refused when nothing was', () => {
    assert.equal(
      copySummary('logs', targets, stats, { onRefused: 'fail', deadLetterTopic: undefined }),
      'copied 5000 records from logs to 2 targets (logs.zstd-3, logs.lz4-1); 12 commits'
    )
  })

  it('says where refused copies went and how many unreadable source batches were skipped', () => {
    const refused = { ...stats, refused: 3, skippedBatches: 2 }
    assert.equal(
      copySummary('logs', targets, refused, { onRefused: 'dead-letter', deadLetterTopic: 'logs.dlq' }),
      'copied 5000 records from logs to 2 targets (logs.zstd-3, logs.lz4-1); 12 commits, ' +
        '3 copies refused (sent to logs.dlq), 2 unreadable source batches skipped'
    )
    assert.match(
      copySummary('logs', targets, refused, { onRefused: 'skip', deadLetterTopic: undefined }),
      /3 copies refused \(skipped\)/
    )
  })
})
