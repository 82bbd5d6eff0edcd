import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../../../lib/log/logger.js'
import {
  AckedPositions,
  positionKey,
  type AckedPositionsDeps,
  type Resender
} from '../../../lib/pipeline/acked-positions.js'
import type { DeliveryFailure } from '../../../lib/producer/producer.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import type { FilePosition } from '../../../lib/sources/file-set.js'

const log = createLogger({ level: 'silent', name: 'acked-positions-test' })
const TOPIC = 'logs'

function position(offset: number, path = '/var/log/app.log', ino = 2): FilePosition {
  return { path, dev: 1, ino, fingerprint: 'ab', fingerprintBytes: 256, offset }
}

interface Harness {
  positions: AckedPositions
  /** Per save, each file's saved offset by path. */
  saves: Array<Record<string, number>>
  /** The offset of the first file in each save. */
  offsets(): number[]
  /** Settles the oldest entry not settled yet: the producer's answer to its whenAcceptedSettled(). */
  ack(): void
  /** The producer accepts `records` more records for `partition`; returns the index of the first. */
  accept(records: number, partition?: number): number
  /** Reports `records` from `first` of `partition` as failed, as the producer does before they count as settled. */
  fail(first: number, records: number, partition?: number, error?: SqueezeError): void
  failedRecords: number
  heldFiles: number
  resends: number
  /** What the resender was asked, in order: `pause KEY`, `resume KEY`, `rewind KEY OFFSET`. */
  calls: string[]
}

const TIMEOUT = new SqueezeError(ErrorCodes.TIMEOUT, 'not acknowledged within delivery.timeout.ms')

/**
 * A producer whose records settle when the test says (each whenAcceptedSettled() waits for the next ack()) and
 * fail when it says, and a sink that notes what each save writes.
 */
function harness(saveGapMs: number, resend = false): Harness {
  const pending: Array<() => void> = []
  const accepted = new Map<number, number>()
  const failureHandlers: Array<(failure: DeliveryFailure) => void> = []
  const producer: AckedPositionsDeps['producer'] = {
    whenAcceptedSettled: () => new Promise<void>((settle) => pending.push(settle)),
    flushAccepted: async () => undefined,
    acceptedCounts: () => [...accepted].map(([partition, count]) => ({ topic: TOPIC, partition, accepted: count })),
    onDeliveryFailure: (handler) => void failureHandlers.push(handler)
  }
  const h: Harness = {
    positions: undefined as unknown as AckedPositions,
    saves: [],
    offsets: () => h.saves.map((s) => Object.values(s)[0] ?? -1),
    ack: () => pending.shift()?.(),
    accept: (records, partition = 0) => {
      const first = accepted.get(partition) ?? 0
      accepted.set(partition, first + records)
      return first
    },
    fail: (first, records, partition = 0, error = TIMEOUT) => {
      for (const handler of failureHandlers)
        handler({ topic: TOPIC, partition, records, firstRecordIndex: first, sent: [], error })
    },
    failedRecords: 0,
    heldFiles: 0,
    resends: 0,
    calls: []
  }
  const sink = {
    async save(files: readonly FilePosition[]) {
      await new Promise((done) => setImmediate(done))
      h.saves.push(Object.fromEntries(files.map((f) => [f.path, f.offset])))
    },
    ageSeconds: () => null
  }
  const metrics: AckedPositionsDeps['metrics'] = {
    positionAge: () => undefined,
    recordsFailed: (records) => (h.failedRecords += records),
    heldFiles: (count) => (h.heldFiles = count),
    fileResent: () => h.resends++
  }
  let generation = 0
  const resender: Resender = {
    pause: (key) => void h.calls.push(`pause ${key}`),
    resume: (key) => void h.calls.push(`resume ${key}`),
    rewind: (key, offset) => {
      h.calls.push(`rewind ${key} ${offset}`)
      return ++generation
    }
  }
  const backoff = { resendBackoff: { firstMs: 5, maxMs: 40 } }
  h.positions = new AckedPositions(
    { sink, producer, log, metrics, saveGapMs, ...(resend ? { resend: resender, ...backoff } : {}) },
    []
  )
  return h
}

const tick = (): Promise<void> => new Promise((done) => setImmediate(done))

async function ticks(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await tick()
}

/** Longer than the harness's resend backoffs: timers, not just the event loop, get their turn. */
const pass = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms))

/** Hands the position after `records` more records of partition 0, read in `generation`; the first's index. */
function read(h: Harness, p: FilePosition, generation = 0, records = 10): number {
  const first = h.accept(records)
  h.positions.handed(p, [], generation)
  return first
}

describe('AckedPositions', () => {
  it('saves coalesce: acknowledgements during the gap between saves are written by one save, at the latest on close', async () => {
    const h = harness(3_600_000)
    for (let offset = 100; offset <= 1000; offset += 100) {
      h.accept(10)
      h.positions.handed(position(offset))
    }
    for (let i = 0; i < 10; i++) {
      h.ack()
      await tick()
    }
    await tick()
    // The first acknowledgement is saved at once; the rest wait for the gap, which close() cuts short.
    assert.deepEqual(h.offsets(), [100])
    await h.positions.close()
    assert.deepEqual(h.offsets(), [100, 1000], 'the final positions, written once')
  })

  it('a save never covers positions not yet acknowledged, and close() writes nothing a save already wrote', async () => {
    const h = harness(0)
    h.accept(10)
    h.positions.handed(position(100))
    h.accept(10)
    h.positions.handed(position(200))
    h.ack()
    await ticks()
    assert.deepEqual(h.offsets(), [100], 'only the acknowledged position')
    h.ack()
    await ticks()
    assert.deepEqual(h.offsets(), [100, 200])
    await h.positions.close()
    assert.deepEqual(h.offsets(), [100, 200], 'no second write of the same positions')
  })

  it("a failed record in the middle holds its file's position before it for the run; acknowledged lines after it, and other files, do not move it", async () => {
    const h = harness(0)
    const app = '/var/log/app.log'
    const db = '/var/log/db.log'
    h.accept(10)
    h.positions.handed(position(100, app))
    const failedFirst = h.accept(10)
    h.positions.handed(position(200, app))
    h.accept(10, 1)
    h.positions.handed(position(50, db, 3))
    h.accept(10)
    h.positions.handed(position(300, app))
    h.ack()
    await ticks()
    assert.deepEqual(h.saves.at(-1), { [app]: 100 })
    // Delivery of app.log's second batch fails: reported before the records count as settled.
    h.fail(failedFirst, 10)
    for (let i = 0; i < 3; i++) h.ack()
    await ticks()
    await h.positions.close()
    assert.deepEqual(h.saves.at(-1), { [app]: 100, [db]: 50 }, 'app.log stays before its failed lines; db.log moves')
    assert.ok(
      h.saves.every((s) => (s[app] ?? 0) <= 100),
      'no save ever covered the failed lines'
    )
    assert.deepEqual(h.positions.heldFiles(), [{ path: app, offset: 100, records: 10 }])
    assert.equal(h.failedRecords, 10)
    assert.equal(h.heldFiles, 1)
  })

  it("failures are matched to the lines they were accepted with, even when they are known before an earlier entry's turn", async () => {
    const h = harness(0)
    const app = '/var/log/app.log'
    const fresh = '/var/log/new.log'
    h.accept(10)
    h.positions.handed(position(100, app))
    // A file first read in this run, whose first batch fails before app.log's batch is even settled.
    const first = h.accept(5)
    h.positions.handed(position(80, fresh, 9))
    h.fail(first, 5)
    h.ack()
    h.ack()
    await ticks()
    await h.positions.close()
    // app.log's records all arrived; new.log is saved at its start, so the next start finds it even renamed.
    assert.deepEqual(h.saves.at(-1), { [app]: 100, [fresh]: 0 })
    assert.deepEqual(h.positions.heldFiles(), [{ path: fresh, offset: 0, records: 5 }])
  })

  it('a file read to its end after its lines failed is not saved as done: its saved position stays before them', async () => {
    const h = harness(0)
    const app = '/var/log/app.log'
    h.accept(10)
    h.positions.handed(position(100, app))
    const failedFirst = h.accept(10)
    h.positions.handed(position(200, app))
    h.fail(failedFirst, 10)
    h.positions.handed(null, [{ ...position(200, app), done: true }])
    for (let i = 0; i < 3; i++) h.ack()
    await ticks()
    await h.positions.close()
    assert.deepEqual(h.saves.at(-1), { [app]: 100 })
  })

  it('with resend: a file held by a timeout is paused, rewound to its held position once its reads in flight settled and the backoff passed; acknowledgements of reads from before the rewind never move it, the first one after does', async () => {
    const h = harness(0, true)
    const app = '/var/log/app.log'
    const key = positionKey(position(0, app))
    read(h, position(100, app))
    h.ack()
    await ticks()
    const failed = read(h, position(200, app))
    read(h, position(300, app))
    h.fail(failed, 10)
    h.ack()
    await ticks()
    assert.deepEqual(h.calls, [`pause ${key}`], 'paused at once')
    assert.equal(h.heldFiles, 1)
    await pass(30)
    assert.deepEqual(h.calls, [`pause ${key}`], 'not rewound while a read of it is in flight')
    // Acknowledged, but after the failed lines: the position stays before them, and the file is rewound now.
    h.ack()
    await ticks()
    assert.deepEqual(h.calls, [`pause ${key}`, `rewind ${key} 100`])
    assert.equal(h.resends, 1)
    // A read from before the rewind, handed after it, then the lines read again from 100.
    read(h, position(400, app), 0)
    read(h, position(250, app), 1)
    assert.ok(h.positions.keeps(key), 'kept open while held')
    h.ack()
    await ticks()
    assert.equal(h.saves.at(-1)?.[app], 100, 'a read from before the rewind does not move the position')
    assert.equal(h.heldFiles, 1)
    h.ack()
    await ticks()
    assert.equal(h.saves.at(-1)?.[app], 250, 'the first lines read again acknowledged: the position moves on')
    assert.equal(h.heldFiles, 0)
    assert.deepEqual(h.positions.heldFiles(), [])
    assert.ok(!h.positions.keeps(key), 'released once settled and not held')
    assert.ok(
      h.saves.every((s) => (s[app] ?? 0) <= 100 || s[app] === 250),
      'no save covered lines not yet sent again'
    )
    read(h, position(350, app), 1)
    h.ack()
    await ticks()
    await h.positions.close()
    assert.equal(h.saves.at(-1)?.[app], 350)
  })

  it('with resend: lines read again that fail again are tried again after a longer backoff; a record the broker refuses is not read again, and the hold lasts for the run', async () => {
    const h = harness(0, true)
    const app = '/var/log/app.log'
    const key = positionKey(position(0, app))
    read(h, position(100, app))
    h.ack()
    await ticks()
    h.fail(read(h, position(200, app)), 10)
    h.ack()
    await pass(20)
    assert.deepEqual(h.calls, [`pause ${key}`, `rewind ${key} 100`])
    h.fail(read(h, position(200, app), 1), 10)
    h.ack()
    await ticks()
    assert.equal(h.calls[2], `pause ${key}`, 'paused again')
    await pass(30)
    assert.deepEqual(h.calls.slice(2), [`pause ${key}`, `rewind ${key} 100`], 'tried again from the same position')
    const refused = new SqueezeError(ErrorCodes.RECORD_TOO_LARGE, 'over max.message.bytes')
    h.fail(read(h, position(200, app), 2), 10, 0, refused)
    h.ack()
    await pass(100)
    assert.equal(h.calls.length, 4, 'not read again after a refusal')
    assert.ok(!h.positions.keeps(key), 'released when rotated away: nothing more is read again')
    read(h, position(300, app), 2)
    h.ack()
    await ticks()
    await h.positions.close()
    assert.equal(h.saves.at(-1)?.[app], 100)
    assert.deepEqual(h.positions.heldFiles(), [{ path: app, offset: 100, records: 30 }])
    assert.equal(h.failedRecords, 30)
  })

  it('with resend: a file first held by a refused record is neither paused nor rewound', async () => {
    const h = harness(0, true)
    const app = '/var/log/app.log'
    read(h, position(100, app))
    const refused = new SqueezeError(ErrorCodes.RECORD_TOO_LARGE, 'over max.message.bytes')
    h.fail(read(h, position(200, app)), 1, 0, refused)
    read(h, position(300, app))
    for (let i = 0; i < 3; i++) h.ack()
    await pass(30)
    await h.positions.close()
    assert.deepEqual(h.calls, [])
    assert.equal(h.saves.at(-1)?.[app], 100)
    assert.equal(h.heldFiles, 1)
  })
})
