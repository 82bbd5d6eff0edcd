import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { startTestKafkaBehindProxy, type TestKafkaBehindProxy } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { appendLines, logLine, savedOffset, startShipper, valueCounts, type Shipper } from '../helpers/shipper.js'

const LINE_BYTES = logLine('app', 0).length + 1
/** Lines written before the broker is cut, while it is cut, and after it is back. */
const BEFORE = 1000
const DURING = 2000
const AFTER = 3000
/** Short enough that the records sent while the broker is cut fail within the test. */
const FAST_FAILURE = [
  '-X',
  'delivery.timeout.ms=2000',
  '-X',
  'request.timeout.ms=1000',
  '-X',
  'retry.backoff.max.ms=200',
  '-X',
  'linger.ms=20'
]

let kafka: TestKafkaBehindProxy | undefined
before(async () => {
  kafka = await startTestKafkaBehindProxy()
})
after(async () => {
  await kafka?.stop()
})

function broker(): TestKafkaBehindProxy {
  assert.ok(kafka !== undefined)
  return kafka
}

/** Waits until each of the lines [0, AFTER) is in the topic at least once, shipped by `shipper`. */
async function untilEveryLine(topic: string, shipper: Shipper): Promise<void> {
  await poll(
    'every line in the topic',
    async () => (await lineCounts(topic)).every((c) => c > 0),
    (done) => done,
    60_000,
    { intervalMs: 500, describeState: () => shipper.output().slice(-2000) }
  )
}

/** How often each of the lines [0, AFTER) is in the topic, for a read_committed reader. */
async function lineCounts(topic: string): Promise<number[]> {
  const counts = await valueCounts(broker(), topic)
  return Array.from({ length: AFTER }, (_, n) => counts.get(logLine('app', n)) ?? 0)
}

/** The shipper's exit code, once it exits by itself; fails with its output if it has not within `ms`. */
async function exitWithin(shipper: Shipper, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms:\n${shipper.output().slice(-3000)}`)), ms)
  })
  try {
    return await Promise.race([shipper.exited, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A shipper following a file that gains BEFORE lines, then (with the broker cut until their records fail) up to
 * DURING; returns with the broker back once the shipper logged the failed deliveries. `shipped` runs before the cut,
 * once the first lines are in the topic.
 */
async function shipThroughACut(
  t: TestContext,
  topic: string,
  args: readonly string[],
  shipped: () => Promise<unknown> = async () => undefined
): Promise<{ first: Shipper; path: string }> {
  const kafka = broker()
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-ship-failures-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'app.log')
  appendLines(path, 'app', 0, BEFORE)
  const first = startShipper(kafka, topic, ['--file', path, '--follow', ...FAST_FAILURE, ...args])
  t.after(() => first.child.kill('SIGKILL'))
  await poll(
    `the first ${BEFORE} lines to be shipped`,
    async () => (await lineCounts(topic)).slice(0, BEFORE).every((c) => c > 0),
    (done) => done,
    60_000,
    { intervalMs: 200, describeState: () => first.output().slice(-2000) }
  )
  await shipped()
  kafka.proxy.cut()
  appendLines(path, 'app', BEFORE, DURING)
  await poll(
    'deliveries to fail while the broker is cut',
    async () => first.output(),
    (output) => /not acknowledged within delivery\.timeout\.ms/.test(output),
    // Inside a transaction the batch first waits for its partition to join it, which retries for up to a minute.
    120_000
  )
  kafka.proxy.heal()
  return { first, path }
}

describe('produce --follow when deliveries fail', () => {
  it('at least once: lines whose records failed are never saved as shipped; the next start sends them, and every line is in the topic', async (t) => {
    const kafka = broker()
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const state = mkdtempSync(join(tmpdir(), 'squeeze-ship-failures-state-'))
    t.after(() => rmSync(state, { recursive: true, force: true }))
    // The cut comes once the state file holds the first lines' position: the lines after it fail.
    const { first, path } = await shipThroughACut(t, topic, ['--state-dir', state], () =>
      poll(
        'the first position saved',
        async () => savedOffset(state),
        (o) => o === BEFORE * LINE_BYTES
      )
    )
    appendLines(path, 'app', DURING, AFTER)
    await poll(
      'the lines written once the broker is back',
      async () => (await lineCounts(topic)).slice(DURING).every((c) => c > 0),
      (done) => done,
      60_000,
      { intervalMs: 200, describeState: () => first.output().slice(-2000) }
    )
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 1, 'failed records make the exit non-zero')
    // The summary, unwrapped: it is wrapped to a terminal's width with indented continuation lines.
    assert.match(
      first.output().replaceAll('\n  ', ' '),
      /lines failed delivery: 1 file keeps its saved read position before them \(\S*app\.log from byte \d+\); they and the lines after them are sent again on the next start/
    )
    assert.match(first.output(), /delivery failed: the file's read position stays before these lines/)
    // Lines after the failed ones were acknowledged, yet the position stays before the first failed line.
    assert.ok(savedOffset(state) <= BEFORE * LINE_BYTES, `saved offset ${savedOffset(state)}`)

    const second = startShipper(kafka, topic, ['--file', path, '--follow', '--state-dir', state])
    t.after(() => second.child.kill('SIGKILL'))
    await untilEveryLine(topic, second)
    await poll(
      'the position of every line saved',
      async () => savedOffset(state),
      (o) => o === AFTER * LINE_BYTES
    )
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0, second.output())
    const counts = await lineCounts(topic)
    assert.deepEqual(
      counts.flatMap((c, n) => (c === 0 ? [n] : [])),
      [],
      'no line lost'
    )
    assert.ok(
      counts.slice(0, BEFORE).every((c) => c === 1),
      'lines saved as shipped before the failure are not sent again'
    )
    t.diagnostic(`duplicates ${counts.reduce((sum, c) => sum + c - 1, 0)} of ${AFTER} lines`)
  })

  it('--exactly-once: a transaction whose records failed aborts with its positions; the next start sends those lines, each line once', async (t) => {
    const kafka = broker()
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const positions = `positions-${Date.now()}`
    const args = ['--exactly-once', '--positions-topic', positions]
    const { first, path } = await shipThroughACut(t, topic, args)
    // The failed transaction aborts: the run ends on its error instead of committing positions past its lines.
    const code = await exitWithin(first, 60_000)
    assert.notEqual(code, 0, first.output())
    appendLines(path, 'app', DURING, AFTER)
    const second = startShipper(kafka, topic, ['--file', path, '--follow', ...args])
    t.after(() => second.child.kill('SIGKILL'))
    await untilEveryLine(topic, second)
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0, second.output())
    const counts = await lineCounts(topic)
    assert.deepEqual(
      counts.flatMap((c, n) => (c === 1 ? [] : [{ line: n, count: c }])).slice(0, 10),
      [],
      'each line once for a read_committed reader'
    )
  })
})
