import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec, createCodec } from '../../../lib/codecs/index.js'
import { AbortedTransactions, type TransactionalBatchHeader } from '../../../lib/consumer/aborted-transactions.js'
import { ATTRIBUTE, BATCH } from '../../../lib/protocol/batch-layout.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'
import { isAbortMarker } from '../../../lib/protocol/record-batch-reader.js'

const P = 7n
const Q = 9n

/** A one-offset batch of `producerId` at `offset`: data, an abort marker or a commit marker. */
function batch(
  producerId: bigint,
  offset: number,
  kind: 'data' | 'abort' | 'commit' | 'plain' = 'data'
): TransactionalBatchHeader & { label: string } {
  const stamped = kind === 'plain' ? -1n : producerId
  return {
    label: `${kind}@${offset}/${stamped}`,
    isTransactional: kind !== 'plain',
    isControl: kind === 'abort' || kind === 'commit',
    isAbortMarker: kind === 'abort',
    producerId: stamped,
    lastOffset: offset
  }
}

/** The labels of the batches a read_committed reader delivers (control batches aside). */
function delivered(
  aborted: Array<{ producerId: bigint; firstOffset: number }>,
  log: ReadonlyArray<ReturnType<typeof batch>>
): string[] {
  const filter = new AbortedTransactions(aborted)
  return log.filter((b) => !filter.skips(b) && !b.isControl).map((b) => b.label)
}

describe('read_committed filtering of one fetch answer', () => {
  it('one producer aborts, aborts again, then commits: only the committed batches come through', () => {
    const log = [
      batch(P, 0),
      batch(P, 1),
      batch(P, 2, 'abort'),
      batch(P, 3),
      batch(P, 4),
      batch(P, 5, 'abort'),
      batch(P, 6),
      batch(P, 7),
      batch(P, 8, 'commit')
    ]
    // Listed out of order on purpose: the filter orders them by first offset itself.
    assert.deepEqual(
      delivered(
        [
          { producerId: P, firstOffset: 3 },
          { producerId: P, firstOffset: 0 }
        ],
        log
      ),
      ['data@6/7', 'data@7/7']
    )
  })

  it('a second abort of the same producer does not hide the first (one entry per abort, not per producer)', () => {
    const log = [
      batch(P, 0),
      batch(P, 1, 'abort'),
      batch(P, 2),
      batch(P, 3, 'commit'),
      batch(P, 4),
      batch(P, 5, 'abort')
    ]
    assert.deepEqual(
      delivered(
        [
          { producerId: P, firstOffset: 0 },
          { producerId: P, firstOffset: 4 }
        ],
        log
      ),
      ['data@2/7']
    )
  })

  it('producers interleave: an abort of one leaves the other and non-transactional batches alone', () => {
    const log = [
      batch(P, 0),
      batch(Q, 1),
      batch(P, 2, 'plain'),
      batch(P, 3),
      batch(Q, 4, 'commit'),
      batch(P, 5, 'abort'),
      batch(Q, 6),
      batch(P, 7),
      batch(Q, 8, 'abort'),
      batch(P, 9, 'commit')
    ]
    const aborted = [
      { producerId: P, firstOffset: 0 },
      { producerId: Q, firstOffset: 6 }
    ]
    assert.deepEqual(delivered(aborted, log), ['data@1/9', 'plain@2/-1', 'data@7/7'])
  })

  it('a transaction that began before the answer is skipped from the first batch on', () => {
    const log = [batch(P, 40), batch(P, 41, 'abort'), batch(P, 42), batch(P, 43, 'commit')]
    assert.deepEqual(delivered([{ producerId: P, firstOffset: 12 }], log), ['data@42/7'])
  })

  it('a batch that spans the first offset counts as aborted (the offset is compared with the batch end)', () => {
    const spanning = { ...batch(P, 10), lastOffset: 12, label: 'data@8-12/7' }
    assert.deepEqual(
      delivered(
        [{ producerId: P, firstOffset: 10 }],
        [batch(P, 7), batch(P, 8, 'commit'), spanning, batch(P, 13, 'abort')]
      ),
      ['data@7/7']
    )
  })

  it('with no aborted transactions listed (read_uncommitted answers list none) nothing is skipped', () => {
    const log = [batch(P, 0), batch(P, 1, 'abort'), batch(Q, 2)]
    assert.deepEqual(delivered([], log), ['data@0/7', 'data@2/9'])
  })
})

describe('isAbortMarker', () => {
  /** A batch laid out as the broker writes a control batch: one record whose key is version and type (0 abort, 1 commit). */
  function controlBatch(type: number): Buffer {
    const key = Buffer.alloc(4)
    key.writeInt16BE(0, 0)
    key.writeInt16BE(type, 2)
    const sealed = buildBatch(
      [{ key, value: Buffer.from([0, 0, 0, 0, 0, 0]), headers: [], timestamp: 1 }],
      createCodec(parseCodecSpec('none'))
    )
    const bytes = Buffer.from(sealed.bytes)
    bytes.writeInt16BE(
      bytes.readInt16BE(BATCH.ATTRIBUTES) | ATTRIBUTE.CONTROL | ATTRIBUTE.TRANSACTIONAL,
      BATCH.ATTRIBUTES
    )
    return bytes
  }

  it('tells an abort marker from a commit marker, and a data batch from both', () => {
    assert.equal(isAbortMarker(controlBatch(0)), true)
    assert.equal(isAbortMarker(controlBatch(1)), false)
    const data = buildBatch(
      [{ key: Buffer.from([0, 0, 0, 0]), value: null, headers: [], timestamp: 1 }],
      createCodec(parseCodecSpec('none'))
    )
    assert.equal(isAbortMarker(Buffer.from(data.bytes)), false)
  })
})
