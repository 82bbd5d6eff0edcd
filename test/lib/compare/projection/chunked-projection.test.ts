import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, parseCodecSpec } from '../../../../lib/codecs/index.js'
import {
  ChunkedProjection,
  projectBatches,
  type TargetProjection
} from '../../../../lib/compare/projection/chunked-projection.js'
import { rebatchPartition, type ProjectedBatch } from '../../../../lib/compare/projection/rebatch.js'
import { formatFor } from '../../../../lib/formats/index.js'
import { sealRecords } from '../../../../lib/protocol/record-batch-builder.js'
import { corpusLines } from '../../../helpers/corpus.js'
import { withPool } from './with-pool.js'

const TARGETS = ['none', 'gzip:6', 'lz4', 'zstd:3'].map(parseCodecSpec)

/** The nginx error fixture over 3 partitions, a line every 5 ms, in 16 KiB batches: about a hundred batches. */
function batches(): ProjectedBatch[] {
  const format = formatFor('nginx-error')
  const lines = corpusLines('nginx_error_chemfh_2023.log')
  return [0, 1, 2].flatMap((partition) =>
    rebatchPartition(
      partition,
      lines
        .filter((_, i) => i % 3 === partition)
        .map((line, i) => ({
          key: null,
          value: format.encodeLine(line),
          headers: [],
          timestamp: 1_700_000_000_000 + i * 5
        })),
      { lingerMs: 100, batchSizeBytes: 16 * 1024 }
    )
  )
}

async function project(chunkBytes: number): Promise<TargetProjection[]> {
  return withPool(2, (pool) =>
    projectBatches(
      batches(),
      new ChunkedProjection(pool, TARGETS, { format: 'nginx-error', readBack: true, chunkBytes })
    )
  )
}

describe('ChunkedProjection: batches projected in shared chunks on the thread pool', () => {
  it("stores what the producer's own sealing stores, batch for batch, whatever the chunk size; every target reads back the same records", async () => {
    const expected = batches()
    const records = expected.reduce((n, b) => n + b.count, 0)
    const small = await project(20 * 1024)
    const whole = await project(64 * 1024 * 1024)
    for (const [t, spec] of TARGETS.entries()) {
      const codec = createCodec(spec)
      const sealed = expected.map((b) => sealRecords(b, codec, Buffer.allocUnsafe).bytes.length)
      for (const result of [small[t], whole[t]]) {
        assert.ok(result !== undefined)
        assert.deepEqual(result.batchStoredBytes, sealed, `${spec.codec}: each batch as the producer seals it`)
        assert.equal(
          result.storedBytes,
          sealed.reduce((a, b) => a + b, 0)
        )
        assert.equal(result.batches, expected.length)
        assert.equal(result.records, records, `${spec.codec}: every record read back`)
        const byPartition = [0, 1, 2].map((p) =>
          expected.reduce((n, b, i) => n + (b.partition === p ? (sealed[i] as number) : 0), 0)
        )
        assert.deepEqual(result.storedBytesByPartition, { 0: byPartition[0], 1: byPartition[1], 2: byPartition[2] })
        assert.ok(result.compressCpuSeconds >= 0 && result.decompressCpuSeconds >= 0 && result.decodeCpuSeconds >= 0)
      }
    }
    for (const run of [small, whole])
      assert.equal(
        new Set(run.map((r) => r.digest)).size,
        1,
        'one digest per run: every codec round-tripped every record'
      )
    assert.notEqual(small[0]?.digest, '')
  })
})
