import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { describe, it, type TestContext } from 'node:test'
import { Rng } from '../../lib/generators/random.js'
import { useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { appendLines, logLine, savedOffset, recordCount, startShipper, valueCounts } from '../helpers/shipper.js'

const kafka = useTestKafka()
const KILLS = 10
const LINES = 40_000
const LINE_BYTES = logLine('app', 0).length + 1

function lineNumber(value: string): number {
  return Number(/line (\d+)$/.exec(value)?.[1] ?? -1)
}

/** The values kcat reads with read_committed, one per line. */
async function kcatValues(topic: string): Promise<string[]> {
  const child = spawn(
    'kcat',
    [
      '-C',
      '-b',
      kafka.broker.brokers.join(','),
      '-t',
      topic,
      '-e',
      '-q',
      '-X',
      'isolation.level=read_committed',
      '-f',
      '%s\\n'
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  assert.equal(code, 0, err)
  return out.split('\n').filter((l) => l !== '')
}

interface Outcome {
  lost: number[]
  unexplained: number[]
  duplicates: number
  windows: Array<{ from: number; to: number }>
  counts: Map<string, number>
}

/**
 * Ships a file that grows while the shipper is SIGKILLed KILLS times at seeded points and restarted, then runs it
 * to the end. `savedLine` says after each kill the first line its saved positions do not cover.
 */
async function killRepeatedly(
  t: TestContext,
  seed: number,
  extraArgs: readonly string[],
  savedLine: (dir: string) => Promise<number>
): Promise<Outcome> {
  const topic = await kafka.createTopic(t)
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-kill-'))
  const path = join(dir, 'app.log')
  const args = ['--file', path, '--follow', '--state-dir', join(dir, 'state'), ...extraArgs]
  const rng = new Rng(seed)
  let written = 0
  const writer = setInterval(() => {
    const next = Math.min(LINES, written + 50)
    if (next > written) appendLines(path, 'app', written, next)
    written = next
  }, 50)
  t.after(() => clearInterval(writer))
  appendLines(path, 'app', 0, 1)
  written = 1
  /** Per kill: the first line not covered by the saved positions, and the highest line in the topic then. */
  const windows: Array<{ from: number; to: number }> = []
  for (let k = 0; k < KILLS; k++) {
    // Killed at a seeded point after it has shipped something in this run: start-up time varies with the load.
    const before = await recordCount(kafka, topic)
    const shipper = startShipper(kafka, topic, args)
    await poll(
      'the shipper to ship',
      () => recordCount(kafka, topic),
      (n) => n > before,
      60_000,
      { intervalMs: 100 }
    )
    await new Promise((resolve) => setTimeout(resolve, rng.float() * 1500))
    shipper.child.kill('SIGKILL')
    await shipper.exited
    const lines = [...(await valueCounts(kafka, topic)).keys()].map(lineNumber)
    windows.push({ from: await savedLine(dir), to: Math.max(-1, ...lines) })
  }
  const last = startShipper(kafka, topic, args)
  await poll(
    'the writer to finish',
    async () => written,
    (n) => n >= LINES,
    120_000
  )
  await poll(
    `all ${LINES} lines`,
    async () => (await valueCounts(kafka, topic)).size,
    (n) => n >= LINES,
    120_000,
    { intervalMs: 1000, describeState: () => last.output().slice(-2000) }
  )
  // Under load the last start can find every line already shipped before it has even set up: SIGTERM once it runs.
  await poll(
    'the last shipper to start',
    async () => last.output(),
    (output) => output.includes('shipping a file set'),
    60_000
  )
  last.child.kill('SIGTERM')
  assert.equal(await last.exited, 0, last.output())
  const counts = await valueCounts(kafka, topic)
  const outcome: Outcome = { lost: [], unexplained: [], duplicates: 0, windows, counts }
  for (let n = 0; n < LINES; n++) {
    const count = counts.get(logLine('app', n)) ?? 0
    if (count === 0) outcome.lost.push(n)
    outcome.duplicates += Math.max(0, count - 1)
    const allowed = 1 + windows.filter((w) => w.from <= n && n <= w.to).length
    if (count > allowed) outcome.unexplained.push(n)
  }
  t.diagnostic(
    `lines ${LINES}, kills ${KILLS}, duplicates ${outcome.duplicates}, first unsaved line at the kills ${windows.map((w) => w.from).join(',')}`
  )
  assert.equal(counts.size, LINES, 'no other records')
  assert.ok(
    windows.filter((w) => w.to > 0 && w.to < LINES - 1).length >= KILLS / 2,
    'most kills came while lines were being shipped'
  )
  assert.deepEqual(outcome.lost.slice(0, 10), [], `${outcome.lost.length} lines lost`)
  if (extraArgs.includes('--exactly-once')) {
    const values = await kcatValues(topic)
    assert.equal(values.length, LINES, 'kcat with read_committed reads every line once')
    assert.equal(new Set(values).size, LINES)
  }
  return outcome
}

describe('produce --follow under SIGKILL', () => {
  it(`at least once: ${KILLS} SIGKILLs at seeded points while the file grows lose no line, and resend only lines past the saved position`, async (t) => {
    const outcome = await killRepeatedly(t, 32, [], async (dir) => savedOffset(join(dir, 'state')) / LINE_BYTES)
    assert.deepEqual(outcome.unexplained.slice(0, 10), [], 'a line sent again was covered by the saved position')
    assert.ok(
      outcome.windows.some((w) => w.from > 0),
      'positions were saved between the kills'
    )
  })

  it(`--exactly-once: ${KILLS} SIGKILLs at seeded points leave every line exactly once for read_committed readers (and kcat)`, async (t) => {
    const positions = `positions-${Date.now()}`
    const outcome = await killRepeatedly(t, 33, ['--exactly-once', '--positions-topic', positions], async () => 0)
    assert.equal(outcome.duplicates, 0, 'no line twice')
    assert.ok((await valueCounts(kafka, positions)).size > 0, 'positions were committed to the positions topic')
  })
})
