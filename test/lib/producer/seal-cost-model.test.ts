import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { SealedBatch } from '../../../lib/protocol/record-batch-builder.js'
import { INLINE_BELOW_BYTES, SealCostModel } from '../../../lib/producer/seal-cost-model.js'

const MiB = 1024 * 1024

/** A batch of `recordsBytes` that cost `cpuSeconds` to compress. */
function sealed(recordsBytes: number, cpuSeconds: number): SealedBatch {
  return {
    bytes: Buffer.alloc(0),
    recordCount: 1,
    uncompressedBytes: recordsBytes,
    compressCpuSeconds: cpuSeconds,
    firstTimestamp: 0
  }
}

describe('SealCostModel', () => {
  it('projects an announced input from full batches: a lone record lingering into a batch of its own does not start a thread', () => {
    const model = new SealCostModel(0.1)
    model.expect(16 * MiB)
    // The first batch pays the codec's set-up; then a one-record batch closed by linger.ms, sealed here (too small
    // for a thread), whose cost per byte is mostly the codec call's own.
    model.sealedBeforeThreads(MiB, sealed(MiB, 0.004))
    model.sealedBeforeThreads(99, sealed(99, 0.0002))
    assert.equal(model.holdsOffFirstThread(), true, 'no cost per byte measured on a full batch yet')
    model.sealedBeforeThreads(MiB, sealed(MiB, 0.002))
    // 0.006 s spent, and 14 MiB more at 0.002 s per MiB: 0.034 s, under the 0.1 s a thread must be projected to save.
    assert.equal(model.holdsOffFirstThread(), true, '16 MiB at the full batches cost stays under inline seconds')
    model.expect(64 * MiB)
    assert.equal(model.holdsOffFirstThread(), false, '64 MiB more at that cost is projected past inline seconds')
  })

  it('without an announcement, starts a thread once full batches sealed here cost inline seconds', () => {
    const model = new SealCostModel(0.01)
    for (let i = 0; i < 100; i++)
      model.sealedBeforeThreads(INLINE_BELOW_BYTES - 1, sealed(INLINE_BELOW_BYTES - 1, 0.001))
    assert.equal(model.holdsOffFirstThread(), true, 'batches too small for a thread count nothing')
    for (let i = 0; i < 4; i++) model.sealedBeforeThreads(MiB, sealed(MiB, 0.002))
    assert.equal(model.holdsOffFirstThread(), true, '0.008 s spent')
    model.sealedBeforeThreads(MiB, sealed(MiB, 0.002))
    assert.equal(model.holdsOffFirstThread(), false, '0.010 s spent')
  })
})
