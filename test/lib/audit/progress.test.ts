import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AuditProgress } from '../../../lib/audit/progress.js'

function sink(isTTY: boolean): { stream: { write(text: string): boolean; isTTY: boolean }; text: () => string } {
  let out = ''
  return {
    stream: {
      isTTY,
      write: (t: string) => {
        out += t
        return true
      }
    },
    text: () => out
  }
}

describe('audit progress', () => {
  it('without a terminal: a JSON line at the start, at most one per interval, and one at the end, with topics, bytes and ETA', () => {
    const s = sink(false)
    let now = 0
    const p = new AuditProgress({ stream: s.stream, everySeconds: 10, now: () => now })
    p.begin(4)
    now = 2000
    p.topicDone('a', 1024)
    now = 4000
    p.topicDone('b', 1024)
    now = 12_000
    p.topicDone('c', 2048)
    now = 13_000
    p.topicDone('d', 0)
    const lines = s
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { topicsDone: number; topics: number; bytesRead: number; etaSeconds: number | null })
    assert.deepEqual(
      lines.map((l) => l.topicsDone),
      [0, 3, 4]
    )
    assert.equal(lines[1]?.bytesRead, 4096)
    assert.equal(lines[1]?.etaSeconds, 4, 'twelve seconds for three topics: four for the last')
    assert.equal(lines[0]?.etaSeconds, null)
  })

  it('on a terminal: one line rewritten in place, cleared at the end', () => {
    const s = sink(true)
    const p = new AuditProgress({ stream: s.stream, everySeconds: 10, now: () => 0 })
    p.begin(2)
    p.topicDone('a', 3 * 1024 * 1024)
    p.end()
    assert.ok(s.text().includes('\r\u001b[2Kaudit: 1/2 topics, 3.0 MiB read, ETA 0 s'), s.text())
    assert.ok(s.text().endsWith('\r\u001b[2K'))
  })
})
