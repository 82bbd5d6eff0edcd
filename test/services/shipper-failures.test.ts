import assert from 'node:assert/strict'
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import { startTestKafkaBehindProxy, type TestKafkaBehindProxy } from '../helpers/kafka.js'
import { scrapeCounter } from '../helpers/metrics.js'
import { poll } from '../helpers/poll.js'
import { freePort } from '../helpers/ports.js'
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
 * DURING; returns once the shipper logged the failed deliveries, with the broker back unless `heal` is false.
 * `shipped` runs before the cut, once the first lines are in the topic.
 */
async function shipThroughACut(
  t: TestContext,
  topic: string,
  args: readonly string[],
  shipped: () => Promise<unknown> = async () => undefined,
  heal = true
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
  if (heal) kafka.proxy.heal()
  return { first, path }
}

/** Waits until the state file holds the position after the first BEFORE lines. */
function firstPositionSaved(state: string): () => Promise<unknown> {
  return () =>
    poll(
      'the first position saved',
      async () => savedOffset(state),
      (o) => o === BEFORE * LINE_BYTES
    )
}

/** A temporary state directory, removed after the test. */
function stateDir(t: TestContext): string {
  const state = mkdtempSync(join(tmpdir(), 'squeeze-ship-failures-state-'))
  t.after(() => rmSync(state, { recursive: true, force: true }))
  return state
}

/** Lines missing from the topic (the first few), and the records beyond one per line. */
function tally(counts: readonly number[]): { lost: number[]; duplicates: number } {
  return {
    lost: counts.flatMap((c, n) => (c === 0 ? [n] : [])).slice(0, 10),
    duplicates: counts.reduce((sum, c) => sum + Math.max(0, c - 1), 0)
  }
}

/**
 * A followed file whose records fail while the broker is cut, kept cut until the shipper has read the file again
 * twice (the first try failed too), then healed: every line arrives without a restart, the hold ends, SIGTERM
 * exits 0. Returns the state file's final offset (or "no state") and the duplicates.
 */
async function resendsWithoutRestart(
  t: TestContext,
  withState: boolean
): Promise<{ state: string; duplicates: number }> {
  const kafka = broker()
  const topic = await kafka.createTopic(t, { partitions: 2 })
  const state = stateDir(t)
  const port = await freePort()
  const metric = async (name: string): Promise<number> => (await scrapeCounter(port, name)) ?? -1
  const args = [...(withState ? ['--state-dir', state] : ['--no-state']), '--metrics-port', String(port)]
  // The cut comes once the first lines' records are acknowledged (and saved): only the lines after them fail.
  const acknowledged = (): Promise<unknown> =>
    poll(
      'the first lines acknowledged',
      () => metric('squeeze_records_produced_total'),
      (n) => n >= BEFORE
    )
  const { first, path } = await shipThroughACut(
    t,
    topic,
    args,
    withState ? firstPositionSaved(state) : acknowledged,
    false
  )
  await poll(
    'the file read again twice while the broker is still cut',
    () => metric('squeeze_source_resent_files_total'),
    (n) => n >= 2,
    60_000,
    { intervalMs: 200, describeState: () => first.output().slice(-2000) }
  )
  assert.equal(await metric('squeeze_source_held_files'), 1, 'held while its lines fail')
  broker().proxy.heal()
  appendLines(path, 'app', DURING, AFTER)
  await untilEveryLine(topic, first)
  await poll(
    'the hold ended (and the position of every line saved)',
    async () => ({ held: await metric('squeeze_source_held_files'), offset: savedOffset(state) }),
    (s) => s.held === 0 && (!withState || s.offset === AFTER * LINE_BYTES),
    60_000,
    { intervalMs: 200, describeState: () => first.output().slice(-2000) }
  )
  assert.ok((await metric('squeeze_source_failed_records_total')) > 0, 'the failed records are counted')
  const output = first.output()
  assert.match(
    output,
    /delivery failed: the file's read position stays before these lines; they are read and sent again in this run/
  )
  assert.equal(output.match(/delivery failed: the file's read position/g)?.length, 1, 'logged once for the outage')
  assert.match(output, /lines that failed delivery were sent again and acknowledged/)
  first.child.kill('SIGTERM')
  assert.equal(await first.exited, 0, 'every failed line was sent again and acknowledged: nothing undelivered')
  assert.match(first.output().replaceAll('\n  ', ' '), /read again and sent, and every one acknowledged/)
  const counts = await lineCounts(topic)
  const { lost, duplicates } = tally(counts)
  assert.deepEqual(lost, [], 'no line lost')
  assert.ok(
    counts.slice(0, BEFORE).every((c) => c === 1),
    'lines acknowledged before the cut are not sent again'
  )
  // Only lines read while the broker was cut (their records on the wire, or acknowledged after the failed ones)
  // can be sent twice.
  assert.ok(duplicates <= DURING - BEFORE, `duplicates ${duplicates}`)
  return {
    state: withState ? `state file at ${savedOffset(state)} of ${AFTER * LINE_BYTES} bytes` : 'no state',
    duplicates
  }
}

describe('produce --follow when deliveries fail', () => {
  it('--follow, at least once: lines whose records failed while the broker was cut are read and sent again in the same run, try after try, until it is back, without a restart', async (t) => {
    const { state, duplicates } = await resendsWithoutRestart(t, true)
    t.diagnostic(`${AFTER} lines, ${DURING - BEFORE} read while cut: 0 lost, ${duplicates} duplicated (${state})`)
  })

  it('--follow --no-state: lines whose records failed are read and sent again in the same run too', async (t) => {
    const { duplicates } = await resendsWithoutRestart(t, false)
    t.diagnostic(`${AFTER} lines, ${DURING - BEFORE} read while cut: 0 lost, ${duplicates} duplicated`)
  })

  it('at least once: a shipper stopped while a file is held keeps its saved position before the failed lines and names it; the next start sends them', async (t) => {
    const kafka = broker()
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const state = stateDir(t)
    // Stopped while the broker is still cut: the file is held, waiting for its lines to be read again.
    const { first, path } = await shipThroughACut(t, topic, ['--state-dir', state], firstPositionSaved(state), false)
    first.child.kill('SIGTERM')
    assert.equal(await exitWithin(first, 60_000), 1, 'failed records make the exit non-zero')
    kafka.proxy.heal()
    // The summary, unwrapped: it is wrapped to a terminal's width with indented continuation lines.
    assert.match(
      first.output().replaceAll('\n  ', ' '),
      /lines failed delivery: 1 file keeps its saved read position before them \(\S*app\.log from byte \d+\); they and the lines after them are sent again on the next start/
    )
    assert.ok(savedOffset(state) <= BEFORE * LINE_BYTES, `saved offset ${savedOffset(state)}`)

    appendLines(path, 'app', DURING, AFTER)
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
    const { lost, duplicates } = tally(counts)
    assert.deepEqual(lost, [], 'no line lost')
    assert.ok(
      counts.slice(0, BEFORE).every((c) => c === 1),
      'lines saved as shipped before the failure are not sent again'
    )
    t.diagnostic(`duplicates ${duplicates} of ${AFTER} lines`)
  })

  it('--follow: a record the broker refuses (over max.message.bytes) is not read again in the run: the file stays held, its later lines are sent once, and the run exits 1', async (t) => {
    const kafka = broker()
    const topic = await kafka.createTopic(t, { partitions: 1, configs: { 'max.message.bytes': '2000' } })
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-ship-failures-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const state = stateDir(t)
    const path = join(dir, 'app.log')
    appendLines(path, 'app', 0, 100)
    // Random bytes in base64 stay larger than max.message.bytes compressed or not.
    appendFileSync(path, `Dec  4 11:16:33 host app: ${randomBytes(3000).toString('base64')}\n`)
    appendLines(path, 'app', 100, 200)
    const port = await freePort()
    const metric = async (name: string): Promise<number> => (await scrapeCounter(port, name)) ?? -1
    const args = ['--file', path, '--follow', '--state-dir', state, '--metrics-port', String(port)]
    const shipper = startShipper(kafka, topic, args)
    t.after(() => shipper.child.kill('SIGKILL'))
    await poll(
      'the refusal logged',
      async () => shipper.output(),
      (output) => /they are sent again on the next start/.test(output),
      60_000
    )
    // Lines written after the refusal are read and sent: the file is not paused for a record that cannot pass.
    appendLines(path, 'app', 200, 300)
    const sent = async (): Promise<number[]> => {
      const counts = await valueCounts(kafka, topic)
      return Array.from({ length: 300 }, (_, n) => counts.get(logLine('app', n)) ?? 0)
    }
    await poll('every other line in the topic', sent, (counts) => counts.every((c) => c > 0), 60_000, {
      intervalMs: 200,
      describeState: () => shipper.output().slice(-2000)
    })
    assert.equal(await metric('squeeze_source_resent_files_total'), 0, 'never read again')
    assert.equal(await metric('squeeze_source_held_files'), 1)
    assert.ok(
      (await sent()).every((c) => c === 1),
      'each other line once: the file was not rewound'
    )
    shipper.child.kill('SIGTERM')
    assert.equal(await shipper.exited, 1, 'a refused record leaves the run failed')
    assert.match(
      shipper.output().replaceAll('\n  ', ' '),
      /lines failed delivery: 1 file keeps its saved read position/
    )
    assert.ok(savedOffset(state) <= 100 * LINE_BYTES, `saved offset ${savedOffset(state)}`)
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
