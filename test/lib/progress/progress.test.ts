import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Progress, progressLine } from '../../../lib/progress/progress.js'

function harness(
  isTTY: boolean,
  quiet = false
): { progress: Progress; writes: string[]; logs: unknown[]; clock: { ms: number } } {
  const writes: string[] = []
  const logs: unknown[] = []
  const clock = { ms: 0 }
  const progress = new Progress({
    stream: { isTTY, columns: 80, write: (text: string) => writes.push(text) },
    log: { info: (obj: unknown) => logs.push(obj) } as never,
    quiet,
    logEveryMs: 5000,
    now: () => clock.ms
  })
  return { progress, writes, logs, clock }
}

describe('progress', () => {
  it('a line: phase, done/total, percent, rate and ETA', () => {
    assert.equal(
      progressLine({ phase: 'copy', done: 12_000, total: 48_000, unit: 'records' }, 3),
      'copy  12,000/48,000 records  25%  4,000/s  ETA 9s'
    )
    assert.equal(progressLine({ phase: 'fill source', done: 500, unit: 'records' }, 0), 'fill source  500 records')
    assert.equal(progressLine({ phase: 'ingest rate' }, 1), 'ingest rate...')
  })

  it('on a terminal: one line redrawn in place, a new phase at once, cleared at the end', () => {
    const { progress, writes, clock } = harness(true)
    progress.report({ phase: 'copy', done: 0, total: 10 })
    clock.ms = 50
    progress.report({ phase: 'copy', done: 1, total: 10 })
    clock.ms = 300
    progress.report({ phase: 'copy', done: 5, total: 10 })
    clock.ms = 310
    progress.report({ phase: 'read back', done: 0, total: 2, unit: 'targets' })
    progress.done()
    assert.equal(writes.length, 4)
    assert.ok(writes.slice(0, 3).every((w) => w.startsWith('\r\u001b[2K') && !w.includes('\n')))
    assert.match(writes[1] ?? '', /copy {2}5\/10 records {2}50%/)
    assert.match(writes[2] ?? '', /read back {2}0\/2 targets/)
    assert.equal(writes[3], '\r\u001b[2K')
  })

  it('without a terminal: a JSON log line per interval, nothing written to the stream', () => {
    const { progress, writes, logs, clock } = harness(false)
    for (let ms = 0; ms <= 12_000; ms += 100) {
      clock.ms = ms
      progress.report({ phase: ms < 6000 ? 'copy' : 'read back', done: ms, total: 12_000 })
    }
    progress.done()
    assert.deepEqual(writes, [])
    assert.equal(logs.length, 3)
  })

  it('--quiet: nothing at all', () => {
    const { progress, writes, logs } = harness(true, true)
    progress.report({ phase: 'copy', done: 1, total: 2 })
    progress.done()
    assert.deepEqual([writes, logs], [[], []])
  })
})
