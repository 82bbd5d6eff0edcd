import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLogger } from '../../../lib/log/logger.js'
import { AckedPositions, type AckedPositionsDeps } from '../../../lib/pipeline/acked-positions.js'
import type { FilePosition } from '../../../lib/sources/file-set.js'

const log = createLogger({ level: 'silent', name: 'acked-positions-test' })

function position(offset: number): FilePosition {
  return { path: '/var/log/app.log', dev: 1, ino: 2, fingerprint: 'ab', fingerprintBytes: 256, offset }
}

/**
 * A producer whose records settle when the test says (each whenAcceptedSettled() waits for the next ack()), and a
 * sink that notes the offset each save writes.
 */
function harness(saveGapMs: number): {
  positions: AckedPositions
  saves: number[]
  ack(): void
} {
  const pending: Array<() => void> = []
  const producer: AckedPositionsDeps['producer'] = {
    whenAcceptedSettled: () => new Promise<void>((settle) => pending.push(settle)),
    flushAccepted: async () => undefined,
    snapshot: () => ({ recordsFailed: 0 }) as ReturnType<AckedPositionsDeps['producer']['snapshot']>
  }
  const saves: number[] = []
  const sink = {
    async save(files: readonly FilePosition[]) {
      await new Promise((done) => setImmediate(done))
      saves.push(files[0]?.offset ?? -1)
    },
    ageSeconds: () => null
  }
  const positions = new AckedPositions(
    { sink, producer, log, metrics: { positionAge: () => undefined }, saveGapMs },
    []
  )
  return { positions, saves, ack: () => pending.shift()?.() }
}

const tick = (): Promise<void> => new Promise((done) => setImmediate(done))

describe('AckedPositions', () => {
  it('saves coalesce: acknowledgements during the gap between saves are written by one save, at the latest on close', async () => {
    const { positions, saves, ack } = harness(3_600_000)
    for (let offset = 100; offset <= 1000; offset += 100) positions.handed([position(offset)])
    for (let i = 0; i < 10; i++) {
      ack()
      await tick()
    }
    await tick()
    // The first acknowledgement is saved at once; the rest wait for the gap, which close() cuts short.
    assert.deepEqual(saves, [100])
    await positions.close()
    assert.deepEqual(saves, [100, 1000], 'the final positions, written once')
  })

  it('a save never covers positions not yet acknowledged, and close() writes nothing a save already wrote', async () => {
    const { positions, saves, ack } = harness(0)
    positions.handed([position(100)])
    positions.handed([position(200)])
    ack()
    for (let i = 0; i < 5; i++) await tick()
    assert.deepEqual(saves, [100], 'only the acknowledged position')
    ack()
    for (let i = 0; i < 5; i++) await tick()
    assert.deepEqual(saves, [100, 200])
    await positions.close()
    assert.deepEqual(saves, [100, 200], 'no second write of the same positions')
  })
})
