import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SentOffsets } from '../../../lib/copier/sent-offsets.js'

describe('SentOffsets', () => {
  it('maps each sent index to its source offset across gaps (transaction markers, compaction), and keeps counting after forget()', () => {
    const sent = new SentOffsets()
    for (const offset of [10, 11, 12, 14, 15, 40]) sent.push(offset)
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => sent.offsetOf(i)), [10, 11, 12, 14, 15, 40])
    assert.equal(sent.offsetOf(6), undefined)
    sent.forget()
    assert.equal(sent.offsetOf(2), undefined, 'forgotten')
    sent.push(41)
    sent.push(41) // the same source record sent again (a re-run batch) keeps its own index
    assert.equal(sent.offsetOf(6), 41)
    assert.equal(sent.offsetOf(7), 41)
  })
})
