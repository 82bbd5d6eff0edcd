import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { bootstrapRatioInterval, bootstrapRatioIntervals } from '../../../../lib/compare/projection/bootstrap.js'
import {
  batchStride,
  eachWindowBatch,
  stratifiedPick,
  windowBatches
} from '../../../../lib/compare/projection/run-projection.js'
import { records } from './source-records.js'

describe("a sample's batches, projected whole or every k-th", () => {
  const settings = { lingerMs: 0, batchSizeBytes: 1 << 20 }

  it('streams the batches windowBatches makes, each copied out before the next overwrites the buffer', () => {
    const window = records(50, 40, 10)
    const streamed: Buffer[] = []
    const count = eachWindowBatch(2, window, settings, (b) => streamed.push(Buffer.from(b.records)))
    const whole = windowBatches(2, window, settings)
    assert.equal(count, 49, "the window's last batch, cut short by its end, is left out")
    assert.deepEqual(
      streamed,
      whole.map((b) => Buffer.from(b.records))
    )
    assert.equal(
      eachWindowBatch(0, records(1, 40, 10), settings, () => undefined),
      1,
      'a lone batch is kept'
    )
  })

  it('picks one batch at a random place in every run of `stride`, the same ones each time', () => {
    const stride = batchStride([{ partition: 0, records: records(1001, 40, 10) }], settings, 100)
    assert.equal(stride, 10)
    const pick = stratifiedPick(stride)
    const chosen = Array.from({ length: 1000 }, (_, i) => i).filter(() => pick())
    assert.equal(chosen.length, 100)
    for (let run = 0; run < 100; run++)
      assert.equal(chosen.filter((i) => Math.floor(i / stride) === run).length, 1, `run ${run}`)
    // Records that alternate two kinds: a fixed place in an even stride would see one kind only.
    const even = chosen.filter((i) => i % 2 === 0).length
    assert.ok(even > 30 && even < 70, `${even} of 100 picks on even batches`)
    const again = stratifiedPick(stride)
    assert.deepEqual(
      Array.from({ length: 1000 }, (_, i) => i).filter(() => again()),
      chosen
    )
    assert.equal(batchStride([{ partition: 0, records: records(1001, 40, 10) }], settings, undefined), 1)
    const all = stratifiedPick(1)
    assert.ok([1, 2, 3].every(() => all()))
  })
})

describe('bootstrapRatioIntervals', () => {
  it('gives every target the interval it gets alone, from one set of draws', () => {
    const unc = Array.from({ length: 300 }, (_, i) => 1000 + (i % 7) * 100)
    const targets = [2, 3, 5].map((d) => unc.map((u, i) => Math.round(u / (i % 3 === 0 ? d : d + 1))))
    assert.deepEqual(
      bootstrapRatioIntervals(unc, targets),
      targets.map((stored) => bootstrapRatioInterval(unc, stored))
    )
    assert.deepEqual(bootstrapRatioIntervals([], [[], []]), [
      { low: 0, high: 0 },
      { low: 0, high: 0 }
    ])
  })
})
