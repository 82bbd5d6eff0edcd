import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { allCoresBoundSeconds, sweepAllCores } from '../../../lib/sweep/all-cores-sweep.js'
import { buildBatches } from '../../../lib/sweep/codec-sweep.js'
import { compressToOwnBuffer, createCodec, formatCodecSpec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { SqueezeError } from '../../../lib/errors.js'
import { corpusLines } from '../../helpers/corpus.js'

const SPECS = ['none', 'gzip:6', 'snappy', 'lz4', 'zstd:3'].map(parseCodecSpec)
const BATCHES = buildBatches(
  corpusLines('nginx_error_chemfh_2023.log').map((line) => ({ key: null, value: Buffer.from(line), timestamp: 0 })),
  64 * 1024
)

describe('sweepAllCores: every target on every core at once', () => {
  it('has every thread compress the same batches with every target in every round, and the bound scales its wall time to the bytes asked for', async () => {
    const sweep = await sweepAllCores(BATCHES, SPECS, { threads: 3, rounds: 2 })
    const sectionBytes = BATCHES.sections.reduce((n, s) => n + s.length, 0)
    assert.equal(sweep.threads, 3)
    assert.equal(sweep.rounds, 2)
    assert.equal(sweep.sectionBytesPerThread, sectionBytes)
    assert.ok(sweep.wallSeconds > 0)
    for (const spec of SPECS) {
      const target = formatCodecSpec(spec)
      const codec = createCodec(spec)
      const expected = BATCHES.sections.reduce((n, s) => n + compressToOwnBuffer(codec, s).length, 0)
      assert.equal(sweep.compressedBytes.get(target), expected, `${target}: the threads compressed these batches`)
      const speed = sweep.compressMBPerCpuSecond.get(target)
      assert.ok(speed !== undefined && speed > 0, `${target}: a speed while every thread compressed`)
    }
    // One round compressed sectionBytes on each of the 3 threads: that much takes one round's wall time, twice that two.
    const near = (actual: number, expected: number): void =>
      assert.ok(Math.abs(actual - expected) <= expected * 1e-12, `${actual} vs ${expected}`)
    near(allCoresBoundSeconds(sweep, sectionBytes * 3), sweep.wallSeconds)
    near(allCoresBoundSeconds(sweep, sectionBytes * 6), sweep.wallSeconds * 2)
  })

  it('with readBack, also decompresses every batch it compressed and reports that speed per target; without, none', async () => {
    const compressOnly = await sweepAllCores(BATCHES, SPECS, { threads: 2, rounds: 1 })
    assert.equal(compressOnly.readBack, false)
    assert.equal(compressOnly.decompressMBPerCpuSecond.size, 0)
    const readBack = await sweepAllCores(BATCHES, SPECS, { threads: 2, rounds: 1, readBack: true })
    assert.equal(readBack.readBack, true)
    assert.deepEqual([...readBack.decompressMBPerCpuSecond.keys()], SPECS.map(formatCodecSpec))
    for (const [target, speed] of readBack.decompressMBPerCpuSecond)
      assert.ok(speed > 0, `${target}: a decompression speed`)
    assert.deepEqual(readBack.compressedBytes, compressOnly.compressedBytes, 'the same batches, compressed the same')
  })

  it('refuses a thread or round count that is not a whole number of at least 1', async () => {
    await assert.rejects(
      sweepAllCores(BATCHES, SPECS, { threads: 0, rounds: 1 }),
      (err: unknown) => err instanceof SqueezeError && err.code === 'SQUEEZE_ERR_CONFIG_INVALID'
    )
    await assert.rejects(sweepAllCores(BATCHES, SPECS, { threads: 2, rounds: 1.5 }), SqueezeError)
  })
})
