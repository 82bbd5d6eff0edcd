import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Rng } from '../../lib/generators/random.js'
import { useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { appendLines, logLine, startShipper, valueCounts } from '../helpers/shipper.js'

const kafka = useTestKafka()
const KILLS = 10
const LINES = 60_000
const LINE_BYTES = logLine('app', 0).length + 1

/** The offset the state file holds for the one file shipped, or 0 before the first save. */
function savedOffset(stateDir: string): number {
  if (!existsSync(stateDir)) return 0
  const name = readdirSync(stateDir).find((n) => n.endsWith('.json'))
  if (name === undefined) return 0
  const state = JSON.parse(readFileSync(join(stateDir, name), 'utf8')) as { files: Array<{ offset: number }> }
  return Math.max(0, ...state.files.map((f) => f.offset))
}

function lineNumber(value: string): number {
  return Number(/line (\d+)$/.exec(value)?.[1] ?? -1)
}

describe('produce --follow under SIGKILL', () => {
  it(`at least once: ${KILLS} SIGKILLs at seeded points while the file grows lose no line, and resend only lines past the saved position`, async (t) => {
    const topic = await kafka.createTopic(t)
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-kill-'))
    const path = join(dir, 'app.log')
    const stateDir = join(dir, 'state')
    const args = ['--file', path, '--follow', '--state-dir', stateDir]
    const rng = new Rng(32)
    let written = 0
    const writer = setInterval(() => {
      const next = Math.min(LINES, written + 50)
      if (next > written) appendLines(path, 'app', written, next)
      written = next
    }, 25)
    t.after(() => clearInterval(writer))
    appendLines(path, 'app', 0, 1)
    written = 1
    /** Per kill: the first line not covered by the saved position, and the highest line in the topic then. */
    const windows: Array<{ from: number; to: number }> = []
    for (let k = 0; k < KILLS; k++) {
      const shipper = startShipper(kafka, topic, args)
      await new Promise((resolve) => setTimeout(resolve, 2000 + rng.float() * 2500))
      shipper.child.kill('SIGKILL')
      await shipper.exited
      const lines = [...(await valueCounts(kafka, topic)).keys()].map(lineNumber)
      windows.push({ from: savedOffset(stateDir) / LINE_BYTES, to: Math.max(-1, ...lines) })
    }
    const last = startShipper(kafka, topic, args)
    await poll('the writer to finish', async () => written, (n) => n >= LINES, 120_000)
    await poll(`all ${LINES} lines`, async () => (await valueCounts(kafka, topic)).size, (n) => n >= LINES, 120_000, { intervalMs: 1000, describeState: () => last.output().slice(-2000) })
    last.child.kill('SIGTERM')
    assert.equal(await last.exited, 0, last.output())
    const counts = await valueCounts(kafka, topic)
    const lost: number[] = []
    const unexplained: number[] = []
    let duplicates = 0
    for (let n = 0; n < LINES; n++) {
      const count = counts.get(logLine('app', n)) ?? 0
      if (count === 0) lost.push(n)
      duplicates += Math.max(0, count - 1)
      const allowed = 1 + windows.filter((w) => w.from <= n && n <= w.to).length
      if (count > allowed) unexplained.push(n)
    }
    t.diagnostic(`lines ${LINES}, kills ${KILLS}, duplicates ${duplicates}, saved positions at the kills ${windows.map((w) => w.from).join(',')}`)
    assert.deepEqual(lost.slice(0, 10), [], `${lost.length} lines lost`)
    assert.deepEqual(unexplained.slice(0, 10), [], 'a line sent again was covered by the saved position')
    assert.equal(counts.size, LINES, 'no other records')
    assert.ok(windows.some((w) => w.from > 0), 'positions were saved between the kills')
  })
})
