import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../../../lib/log/logger.js'
import { AckedPositions, type AckedPositionsDeps } from '../../../lib/pipeline/acked-positions.js'
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
  fail(first: number, records: number, partition?: number): void
  failedRecords: number
  heldFiles: number
}

/**
 * A producer whose records settle when the test says (each whenAcceptedSettled() waits for the next ack()) and
 * fail when it says, and a sink that notes what each save writes.
 */
function harness(saveGapMs: number): Harness {
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
    fail: (first, records, partition = 0) => {
      const error = new SqueezeError(ErrorCodes.TIMEOUT, 'not acknowledged within delivery.timeout.ms')
      for (const handler of failureHandlers)
        handler({ topic: TOPIC, partition, records, firstRecordIndex: first, sent: [], error })
    },
    failedRecords: 0,
    heldFiles: 0
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
    fileResent: () => undefined
  }
  h.positions = new AckedPositions({ sink, producer, log, metrics, saveGapMs }, [])
  return h
}

const tick = (): Promise<void> => new Promise((done) => setImmediate(done))

async function ticks(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await tick()
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
})
