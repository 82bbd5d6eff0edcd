import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { deliveryOutcome, produceSummary, undelivered } from '../../../lib/report/produce-summary.js'

const stats = {
  recordsAccepted: 1000,
  recordsAcked: 990,
  recordsFailed: 4,
  batchesAcked: 7,
  uncompressedBytes: 400_000,
  compressedBytes: 50_000,
  compressCpuSeconds: 0.0123,
  retries: 0
}

describe("produce's closing summary", () => {
  it('says what was sent and stored, what was not, and how many accepted records have no outcome yet', () => {
    const run = { topic: 'logs', codec: 'zstd:3', parseErrors: 3, onParseError: 'skip', rejected: 1, linesSplit: 2 }
    assert.equal(
      produceSummary(stats, run),
      'produced 990 records to logs with zstd:3: 7 batches, 400000 bytes uncompressed -> 50000 bytes sent (8.00x)\n' +
        'compression cpu 0.012 s; lines not parsed: 3 (skip), records too large: 1, lines split: 2, undelivered: 4; ' +
        'accepted 1000: 990 acknowledged, 4 failed, 6 without an outcome yet'
    )
  })

  it('names no gap once every accepted record is acknowledged or failed, and no ratio when nothing was sent', () => {
    const settled = { ...stats, recordsAcked: 996, compressedBytes: 0 }
    assert.equal(deliveryOutcome(settled), 'accepted 1000: 996 acknowledged, 4 failed')
    assert.match(
      produceSummary(settled, {
        topic: 't',
        codec: 'none',
        parseErrors: 0,
        onParseError: 'raw',
        rejected: 0,
        linesSplit: 0
      }),
      /-> 0 bytes sent \(0\.00x\)/
    )
  })

  it("a file set's files held before failed lines: the summary says where the next start sends them from", () => {
    const run = { topic: 'logs', codec: 'zstd:3', parseErrors: 0, onParseError: 'skip', rejected: 0, linesSplit: 0 }
    const one = produceSummary(stats, { ...run, heldFiles: [{ path: '/var/log/app.log', offset: 39000 }] })
    assert.ok(
      one.endsWith(
        '\nlines failed delivery: 1 file keeps its saved read position before them (/var/log/app.log from byte ' +
          '39000); they and the lines after them are sent again on the next start'
      ),
      one
    )
    const two = [
      { path: '/var/log/a.log', offset: 0 },
      { path: '/var/log/b.log', offset: 10 }
    ]
    assert.match(produceSummary(stats, { ...run, heldFiles: two }), /2 files keep their saved read position/)
    assert.ok(!produceSummary(stats, { ...run, heldFiles: [] }).includes('failed delivery'))
  })

  it('without saved positions (--no-state) the summary names where the failed lines begin, and promises no resend from there', () => {
    const run = { topic: 'logs', codec: 'zstd:3', parseErrors: 0, onParseError: 'skip', rejected: 0, linesSplit: 0 }
    const held = [{ path: '/var/log/app.log', offset: 39000 }]
    const text = produceSummary(stats, { ...run, heldFiles: held, positionsSaved: false })
    assert.ok(
      text.endsWith(
        '\nlines failed delivery in 1 file (/var/log/app.log from byte 39000); no read positions are saved ' +
          '(--no-state): the next start reads every file from its start'
      ),
      text
    )
    assert.ok(!text.includes('saved read position before them'))
  })

  it('failed records whose lines were read again and acknowledged in the run leave nothing undelivered; held files do', () => {
    const run = { topic: 'logs', codec: 'none', parseErrors: 0, onParseError: 'raw', rejected: 0, linesSplit: 0 }
    assert.ok(undelivered(stats, {}), 'failed, not sent again')
    assert.ok(!undelivered(stats, { deliveryRecovered: true }))
    assert.ok(!undelivered({ ...stats, recordsFailed: 0 }, {}))
    assert.match(
      produceSummary(stats, { ...run, deliveryRecovered: true }),
      /read again and sent, and every one acknowledged$/
    )
    assert.doesNotMatch(
      produceSummary({ ...stats, recordsFailed: 0 }, { ...run, deliveryRecovered: true }),
      /read again/
    )
  })

  it('counts the compressed files a file set left unread, and says nothing of them when there were none', () => {
    const run = { topic: 'logs', codec: 'zstd:3', parseErrors: 0, onParseError: 'skip', rejected: 0, linesSplit: 0 }
    assert.match(
      produceSummary(stats, { ...run, compressedFilesSkipped: 2 }),
      /\ncompressed files left unread: 2 \(the log names each; --exclude leaves them out\)/
    )
    assert.doesNotMatch(produceSummary(stats, { ...run, compressedFilesSkipped: 0 }), /compressed files/)
  })
})
