import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SentOffsets } from '../../../lib/copier/sent-offsets.js'

describe('SentOffsets', () => {
  it('maps each sent index to its source offset across gaps (transaction markers, compaction), and keeps counting after forget()', () => {
    const sent = new SentOffsets()
    for (const offset of [10, 11, 12, 14, 15, 40]) sent.push(offset)
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((i) => sent.offsetOf(i)),
      [10, 11, 12, 14, 15, 40]
    )
    assert.equal(sent.offsetOf(6), undefined)
    sent.forget()
    assert.equal(sent.offsetOf(2), undefined, 'forgotten')
    sent.push(41)
    sent.push(41) // the same source record sent again (a re-run batch) keeps its own index
    assert.equal(sent.offsetOf(6), 41)
    assert.equal(sent.offsetOf(7), 41)
  })

  it('forget(mark) drops only what was sent before the mark: copies sent while a commit waits keep their offsets', () => {
    const sent = new SentOffsets()
    for (const offset of [10, 11, 12, 14, 15]) sent.push(offset)
    const mark = sent.count
    for (const offset of [16, 17, 30]) sent.push(offset)
    sent.forget(mark)
    assert.deepEqual(
      [3, 4, 5, 6, 7, 8].map((i) => sent.offsetOf(i)),
      [undefined, undefined, 16, 17, 30, undefined]
    )
    sent.forget(6)
    assert.deepEqual(
      [5, 6, 7].map((i) => sent.offsetOf(i)),
      [undefined, 17, 30],
      'a run cut at the mark keeps its later part'
    )
    sent.forget()
    assert.equal(sent.offsetOf(7), undefined)
  })
})
