import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../../../lib/codecs/index.js'
import { levelMix } from '../../../../lib/compare/level-mix.js'
import { packBatches } from '../../../../lib/compare/projection/pack-batches.js'
import { projectTarget } from '../../../../lib/compare/projection/project-target.js'
import { rebatch, type SourceRecord } from '../../../../lib/compare/projection/rebatch.js'
import { targetLabel } from '../../../../lib/report/compare-table.js'

/** Log-like records, `gapMs` apart: `n` of them over `partitions` partitions. */
function source(n: number, gapMs: number, partitions = 2): Map<number, SourceRecord[]> {
  const byPartition = new Map<number, SourceRecord[]>()
  for (let i = 0; i < n; i++) {
    const value = Buffer.from(`2024-05-18T02:40:${String(i % 60).padStart(2, '0')}Z web-${i % 5} GET /api/v1/items/${(i * 7919) % 10_000} 200 ${300 + ((i * 104729) % 9000)}`)
    const list = byPartition.get(i % partitions) ?? []
    list.push({ key: null, value, headers: [], timestamp: 1_700_000_000_000 + i * gapMs })
    byPartition.set(i % partitions, list)
  }
  return byPartition
}

function project(byPartition: Map<number, SourceRecord[]>, lingerMs: number): { levels: readonly number[]; mix: ReturnType<typeof levelMix> } {
  const batches = rebatch(byPartition, { lingerMs, batchSizeBytes: 64 * 1024 })
  const { data, slots } = packBatches(batches)
  const p = projectTarget({ spec: parseCodecSpec('zstd:adaptive'), format: null, data, slots, readBack: false, lingerMs })
  assert.ok(p.levels !== undefined && p.levels.length === slots.length)
  return { levels: p.levels, mix: levelMix(slots.map((s, i) => ({ level: p.levels?.[i] ?? null, uncompressedBytes: s.end - s.start }))) }
}

describe('compare --mode projection with zstd:adaptive', () => {
  it('at a trickle the replayed producer keeps up and climbs above the default level', () => {
    // 20 records a second: a batch of 4 records closes by linger.ms every 200 ms and takes microseconds to compress.
    const { levels, mix } = project(source(1_500, 50, 1), 200)
    assert.equal(levels[0], 3, 'starts at zstd\'s default')
    assert.ok(Math.max(...levels) > 3, `climbed: ${levels.join(',')}`)
    assert.ok(mix.length >= 2)
    assert.ok(Math.abs(mix.reduce((n, m) => n + m.share, 0) - 1) < 1e-9)
  })

  it('records all stamped in the same millisecond are a burst no thread keeps up with: the level comes down to the minimum', () => {
    const { levels } = project(source(200_000, 0), 5)
    assert.equal(levels[levels.length - 1], 1, `came down: ${levels.join(',')}`)
  })

  it('the row names the mix: zstd:adaptive (3×41%, 6×59%)', () => {
    assert.equal(targetLabel({ target: 'zstd:adaptive', levelMix: [{ level: 3, share: 0.41 }, { level: 6, share: 0.59 }] }), 'zstd:adaptive (3×41%, 6×59%)')
    assert.equal(targetLabel({ target: 'zstd:3' }), 'zstd:3')
  })
})
