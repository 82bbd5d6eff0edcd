import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AuditProgress } from '../../../lib/audit/progress.js'
import { Progress } from '../../../lib/progress/progress.js'

interface Logged {
  readonly progress: { done: number; total: number; unit: string; bytesRead: number; etaSeconds?: number }
}

function progress(isTTY: boolean, now: () => number): { audit: AuditProgress; text: () => string; logs: Logged[] } {
  let out = ''
  const logs: Logged[] = []
  const stream = {
    isTTY,
    columns: 100,
    write: (t: string) => {
      out += t
      return true
    }
  }
  const log = { info: (fields: object) => void logs.push(fields as Logged) }
  return {
    audit: new AuditProgress(new Progress({ stream, log, quiet: false, logEveryMs: 10_000, now })),
    text: () => out,
    logs
  }
}

describe('audit progress, on lib/progress', () => {
  it('off a terminal: a log line at the start, at most one per interval, and one at the end, with topics, bytes read and ETA', () => {
    let now = 0
    const p = progress(false, () => now)
    p.audit.begin(4)
    now = 1000
    p.audit.read(1024)
    now = 2000
    p.audit.topicDone('a')
    now = 4000
    p.audit.read(1024)
    p.audit.topicDone('b')
    now = 12_000
    p.audit.read(2048)
    p.audit.topicDone('c')
    now = 13_000
    p.audit.topicDone('d')
    assert.deepEqual(
      p.logs.map((l) => [l.progress.done, l.progress.total, l.progress.unit]),
      [
        [0, 4, 'topics'],
        [2, 4, 'topics'],
        [4, 4, 'topics']
      ]
    )
    assert.equal(p.logs[1]?.progress.bytesRead, 4096, 'bytes read count as they are read, before their topic ends')
    assert.equal(p.logs[1]?.progress.etaSeconds, 12, 'twelve seconds for two topics: twelve for the other two')
    assert.equal(p.logs[0]?.progress.etaSeconds, undefined)
    assert.equal(p.text(), '', 'off a terminal, progress goes to the log only')
  })

  it('on a terminal: one line rewritten in place, cleared at the end', () => {
    let now = 0
    const p = progress(true, () => now)
    p.audit.begin(2)
    now = 5000
    p.audit.read(3 * 1024 * 1024)
    now = 10_000
    p.audit.topicDone('a')
    p.audit.end()
    assert.ok(p.text().includes('\r\u001b[2Kaudit  1/2 topics  50%  3.00MiB read  ETA 10s'), p.text())
    assert.ok(p.text().endsWith('\r\u001b[2K'))
    assert.deepEqual(p.logs, [])
  })
})
