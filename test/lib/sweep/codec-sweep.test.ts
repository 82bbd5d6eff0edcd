import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  buildBatches,
  defaultLevels,
  sweepBatchSizes,
  sweepCodecs,
  type BatchSet
} from '../../../lib/sweep/codec-sweep.js'
import { createCodec, formatCodecSpec, parseCodecSpec, type CodecSpec } from '../../../lib/codecs/index.js'
import { SqueezeError } from '../../../lib/errors.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { BATCH } from '../../../lib/protocol/batch-layout.js'
import type { OutgoingRecord } from '../../../lib/protocol/record.js'
import { readBatches } from '../../helpers/record-batches.js'

function generated(count: number): OutgoingRecord[] {
  const generator = createGenerator('http', { seed: 7 })
  return Array.from({ length: count }, () => {
    const r = generator.next()
    return { key: r.key, value: r.value, timestamp: r.timestampMs }
  })
}

const RECORDS = generated(6000)
const SPECS: CodecSpec[] = [
  'none',
  'gzip:1',
  'gzip:9',
  'snappy',
  'lz4:1',
  'lz4:9',
  'zstd:-5',
  'zstd:1',
  'zstd:3',
  'zstd:9',
  'zstd:19'
].map(parseCodecSpec)

describe('buildBatches', () => {
  it('cuts real v2 record sections no bigger than the batch size, holding every record in order', () => {
    const batches = buildBatches(RECORDS, 64 * 1024)
    assert.ok(batches.sections.length > 1)
    assert.equal(batches.records, RECORDS.length)
    for (const section of batches.sections) assert.ok(section.length + BATCH.HEADER_BYTES <= 64 * 1024)
    // Re-wrap each section as an uncompressed batch and read it back with the consumer's reader.
    let next = 0
    for (const [i, section] of batches.sections.entries()) {
      const batch = Buffer.alloc(BATCH.HEADER_BYTES + section.length)
      section.copy(batch, BATCH.HEADER_BYTES)
      batch.writeInt32BE(batch.length - BATCH.LOG_OVERHEAD, BATCH.LENGTH)
      batch.writeInt8(2, BATCH.MAGIC)
      batch.writeInt32BE(batches.recordCounts[i]!, BATCH.RECORD_COUNT)
      const [read] = readBatches(batch, { verifyCrc: false })
      for (const record of read!.records) assert.deepEqual(record.value, RECORDS[next++]!.value)
    }
    assert.equal(next, RECORDS.length)
  })
})

describe('sweepCodecs', () => {
  const batches: BatchSet = buildBatches(RECORDS, 1024 * 1024)
  const results = sweepCodecs(batches, SPECS, { runs: 2 })
  const ratioOf = (target: string): number => results.find((r) => r.target === target)?.ratio ?? Number.NaN

  it('reports every requested codec and level, once, in the order asked', () => {
    assert.deepEqual(
      results.map((r) => r.target),
      SPECS.map(formatCodecSpec)
    )
    for (const r of results) {
      assert.equal(r.runs, 2)
      assert.ok(r.compressMBPerSecond > 0 && r.decompressMBPerSecond > 0, `${r.target} throughput`)
      assert.equal(r.uncompressedBytes, results[0]!.uncompressedBytes)
    }
  })

  it('measures ratio as whole batches in / whole batches out, so none is exactly 1', () => {
    const none = results.find((r) => r.codec === 'none')!
    assert.equal(none.ratio, 1)
    assert.equal(none.compressedBytes, none.uncompressedBytes)
    const zstd3 = results.find((r) => r.target === 'zstd:3')!
    const direct = batches.sections.reduce(
      (sum, s) => sum + BATCH.HEADER_BYTES + createCodec({ codec: 'zstd', level: 3 }).compress(s).length,
      0
    )
    assert.equal(zstd3.compressedBytes, direct)
  })

  it('on log data every codec shrinks the batches, and stronger zstd levels are no larger than level 1', () => {
    for (const r of results) if (r.codec !== 'none') assert.ok(r.ratio > 2, `${r.target} ratio ${r.ratio}`)
    for (const level of ['zstd:3', 'zstd:9', 'zstd:19'])
      assert.ok(ratioOf(level) >= ratioOf('zstd:1'), `${level} vs zstd:1`)
    assert.ok(ratioOf('zstd:19') > ratioOf('zstd:-5'))
    assert.ok(ratioOf('gzip:9') >= ratioOf('gzip:1'))
  })

  it('verifies each round trip byte for byte and fails loudly on a codec that corrupts', () => {
    const zstd = createCodec({ codec: 'zstd', level: 1 })
    const flipping = {
      ...zstd,
      decompress: (input: Uint8Array): Buffer => {
        const out = zstd.decompress(input)
        out[out.length >> 1] = out[out.length >> 1]! ^ 0x01
        return out
      }
    }
    assert.throws(
      () => sweepCodecs(batches, [{ codec: 'zstd', level: 1 }], { runs: 1, codecFor: () => flipping }),
      (err: unknown) =>
        err instanceof SqueezeError &&
        err.code === 'SQUEEZE_ERR_CODEC_CORRUPT' &&
        /zstd:1 round trip is not byte-exact in batch 0/.test(err.message)
    )
    const truncating = { ...zstd, decompress: (input: Uint8Array): Buffer => zstd.decompress(input).subarray(1) }
    assert.throws(
      () => sweepCodecs(batches, [{ codec: 'zstd', level: 1 }], { runs: 1, codecFor: () => truncating }),
      /not byte-exact/
    )
  })

  it('times decompression into one reused buffer, as the readers decompress, and verifies that path too', () => {
    const zstd = createCodec({ codec: 'zstd', level: 1 })
    const into = zstd.decompressInto!
    let wholeCalls = 0
    const outputs = new Set<ArrayBufferLike>()
    const watching = {
      ...zstd,
      decompress: (input: Uint8Array, max?: number): Buffer => (wholeCalls++, zstd.decompress(input, max)),
      decompressInto: (input: Uint8Array, output: Buffer): number => (outputs.add(output.buffer), into(input, output))
    }
    sweepCodecs(batches, [{ codec: 'zstd', level: 1 }], { runs: 3, codecFor: () => watching })
    assert.equal(wholeCalls, batches.sections.length, 'decompress() only verifies, once per batch')
    assert.equal(outputs.size, 1, 'every timed pass writes into the same buffer')
    const corruptingInto = {
      ...zstd,
      decompressInto: (input: Uint8Array, output: Buffer): number => {
        const written = into(input, output)
        output[7] = output[7]! ^ 0x01
        return written
      }
    }
    assert.throws(
      () => sweepCodecs(batches, [{ codec: 'zstd', level: 1 }], { runs: 1, codecFor: () => corruptingInto }),
      /zstd:1 round trip is not byte-exact in batch 0/
    )
  })

  it('keeps each compressed batch in memory of its own size, not in a worst-case output per batch', () => {
    for (const spec of [
      { codec: 'lz4', level: 1 },
      { codec: 'zstd', level: 3 }
    ] as CodecSpec[]) {
      const real = createCodec(spec)
      const kept: Uint8Array[] = []
      const watching = {
        ...real,
        decompress: (input: Uint8Array): Buffer => (kept.push(input), real.decompress(input))
      }
      sweepCodecs(batches, [spec], { runs: 1, codecFor: () => watching })
      const held = kept.reduce((sum, c) => sum + c.buffer.byteLength, 0)
      const bytes = kept.reduce((sum, c) => sum + c.byteLength, 0)
      assert.ok(held < 2 * bytes, `${formatCodecSpec(spec)}: ${held} bytes held for ${bytes} compressed`)
    }
  })

  it('rejects a run count that cannot give a median', () => {
    assert.throws(() => sweepCodecs(batches, SPECS, { runs: 0 }), /runs must be a whole number >= 1/)
  })
})

describe('defaultLevels', () => {
  it('sweeps gzip 1..9, lz4 1..12, zstd -5, -1, 1..19 (20..22 only with ultra), and none/snappy once', () => {
    assert.deepEqual(defaultLevels('gzip', false).map(formatCodecSpec), [
      'gzip:1',
      'gzip:2',
      'gzip:3',
      'gzip:4',
      'gzip:5',
      'gzip:6',
      'gzip:7',
      'gzip:8',
      'gzip:9'
    ])
    assert.deepEqual(
      defaultLevels('lz4', false).map((s) => s.level),
      Array.from({ length: 12 }, (_, i) => i + 1)
    )
    const zstd = defaultLevels('zstd', false).map((s) => s.level)
    assert.deepEqual(zstd, [-5, -1, ...Array.from({ length: 19 }, (_, i) => i + 1)])
    assert.deepEqual(
      defaultLevels('zstd', true)
        .slice(-3)
        .map((s) => s.level),
      [20, 21, 22]
    )
    assert.deepEqual(defaultLevels('snappy', true), [{ codec: 'snappy', level: null }])
    assert.deepEqual(defaultLevels('none', false), [{ codec: 'none', level: null }])
  })
})

describe('sweepBatchSizes', () => {
  it('shows bigger batches compress better with zstd: 1 MiB batches beat 16 KiB ones', () => {
    const sizes = sweepBatchSizes(
      (batchBytes) => buildBatches(RECORDS, batchBytes),
      [16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024]
    )
    assert.deepEqual(
      sizes.map((s) => s.batchBytes),
      [16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024]
    )
    const zstd = sizes.map((s) => s.ratios['zstd:3'] ?? Number.NaN)
    assert.ok(zstd[3]! > zstd[0]!, `zstd:3 at 1 MiB ${zstd[3]} vs 16 KiB ${zstd[0]}`)
    // Non-decreasing, allowing a sliver for the last, partly filled batch.
    for (let i = 1; i < zstd.length; i++)
      assert.ok(zstd[i]! >= zstd[i - 1]! * 0.99, `zstd:3 ratio drops from ${zstd[i - 1]} to ${zstd[i]}`)
    assert.ok(sizes.every((s) => (s.ratios['lz4:1'] ?? 0) > 1))
    assert.ok(sizes[0]!.batches > sizes[3]!.batches)
    assert.equal(Math.round(sizes[0]!.meanRecordsPerBatch * sizes[0]!.batches), RECORDS.length)
  })
})
