import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../../../lib/codecs/index.js'
import { lingerAdvice, sweepBatching } from '../../../../lib/compare/projection/batching-sweep.js'
import type { SourceRecord } from '../../../../lib/compare/projection/rebatch.js'
import { formatFor } from '../../../../lib/formats/index.js'
import { renderBatchingHeatmapSvg } from '../../../../lib/report/batching-heatmap-svg.js'
import { sweepFindings } from '../../../../lib/report/projection-text.js'
import { corpusLines } from '../../../helpers/corpus.js'
import { withPool } from './with-pool.js'

const KIB = 1024
const SIZES = [4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 1024 * KIB]
const LINGERS = [0, 50, 5000]

/** The nginx error fixture as a busy server's traffic: a line every 10 ms, alternating over 2 partitions (the field report's set-up). */
function nginxTopic(): Map<number, SourceRecord[]> {
  const format = formatFor('nginx-error')
  const byPartition = new Map<number, SourceRecord[]>([
    [0, []],
    [1, []]
  ])
  corpusLines('nginx_error_chemfh_2023.log').forEach((line, i) => {
    byPartition
      .get(i % 2)
      ?.push({ key: null, value: format.encodeLine(line), headers: [], timestamp: 1_700_000_000_000 + i * 10 })
  })
  return byPartition
}

describe('batching what-if on the nginx-error fixture', () => {
  it('the ratio rises with batch.size until batches stop growing, and the report names that batch.size', async () => {
    const sweep = await withPool(2, (pool) =>
      sweepBatching(
        nginxTopic(),
        [parseCodecSpec('zstd:3'), parseCodecSpec('lz4:1')],
        { lingerMs: LINGERS, batchSizeBytes: SIZES },
        pool
      )
    )
    assert.equal(sweep.cells.length, LINGERS.length * SIZES.length * 2)
    for (const target of ['zstd:3', 'lz4:1']) {
      const row = SIZES.map((size) =>
        sweep.cells.find((c) => c.target === target && c.lingerMs === 5000 && c.batchSizeBytes === size)
      )
      const stop = sweep.growthStops.find((s) => s.lingerMs === 5000)?.batchSizeBytes
      // Each partition holds ~80 KB, all within 5 s: one batch per partition from 256 KiB up.
      assert.equal(stop, 256 * KIB, JSON.stringify(sweep.growthStops))
      const at = SIZES.indexOf(stop)
      for (let i = 1; i <= at; i++) {
        assert.ok(
          (row[i]?.ratio ?? 0) > (row[i - 1]?.ratio ?? 0),
          `${target}: ${SIZES[i]} bytes ${row[i]?.ratio} > ${SIZES[i - 1]} bytes ${row[i - 1]?.ratio}`
        )
        assert.ok((row[i]?.meanRecordsPerBatch ?? 0) > (row[i - 1]?.meanRecordsPerBatch ?? 0))
      }
      for (let i = at + 1; i < SIZES.length; i++)
        assert.equal(
          row[i]?.ratio,
          row[at]?.ratio,
          `${target}: past the stop the batches, and so the ratio, stay the same`
        )
    }
    // 50 ms of linger holds ~3 records per partition: batches stop growing at a much smaller batch.size.
    const short = sweep.growthStops.find((s) => s.lingerMs === 50)?.batchSizeBytes
    assert.ok(short !== null && short !== undefined && short < 256 * KIB, String(short))
    assert.ok(sweep.cells.filter((c) => c.lingerMs === 50).every((c) => c.meanLingerUsedMs <= 50))
    const findings = sweepFindings({ ...sweep, advice: null })
    assert.ok(
      findings.includes(
        'at linger.ms 5000 batches stop growing at batch.size 256.0KiB: a larger batch.size does not raise the ratio'
      ),
      findings.join('\n')
    )
  })

  it('advises raising linger.ms with the ratio it gains and the latency it costs; the heatmap has a cell per pair', async () => {
    const sweep = await withPool(1, (pool) =>
      sweepBatching(nginxTopic(), [parseCodecSpec('zstd:3')], { lingerMs: LINGERS, batchSizeBytes: [1024 * KIB] }, pool)
    )
    const now = sweep.cells.find((c) => c.lingerMs === 0)
    assert.ok(now !== undefined)
    const advice = lingerAdvice(sweep.cells, 'zstd:3', {
      lingerMs: 0,
      batchSizeBytes: 1024 * KIB,
      ratio: now.ratio,
      meanLingerUsedMs: now.meanLingerUsedMs
    })
    assert.ok(advice !== null)
    assert.ok(
      advice.toRatio > advice.fromRatio * 1.05 && advice.toLingerMs > 0 && advice.addedLatencyMs > 0,
      JSON.stringify(advice)
    )
    assert.match(
      sweepFindings({ ...sweep, advice }).at(-1) ?? '',
      /^raise linger\.ms to \d+ for zstd:3: the ratio goes from [\d.]+x to [\d.]+x, at \d+ ms more mean latency per batch/
    )
    const svg = renderBatchingHeatmapSvg({ ...sweep, advice }, 'zstd:3', 'nginx')
    assert.equal(svg.match(/<rect class="cell"/g)?.length, LINGERS.length)
  })
})
