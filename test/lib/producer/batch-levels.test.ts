import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../../lib/codecs/index.js'
import { createLogger } from '../../../lib/log/logger.js'
import { BatchLevels } from '../../../lib/producer/batch-levels.js'
import type { SealTiming } from '../../../lib/producer/compression-worker.js'
import { TopicCodecs } from '../../../lib/producer/config.js'
import { fakeClock } from '../../helpers/fake-clock.js'

const MIB = 1024 * 1024
const BATCH = MIB

/** zstd:adaptive over 1..9 with one compression thread (alive while `threadsLeft` says so), linger.ms 100, buffer.memory 32 MiB. */
function levels(clock: { now(): number }, threadsLeft = (): number => 1): BatchLevels {
  const config = {
    lingerMs: 100,
    bufferMemoryBytes: 32 * MIB,
    compressionThreads: 1,
    adaptiveLevel: { min: 1, max: 9 }
  }
  return new BatchLevels(config, new TopicCodecs({ codec: parseCodecSpec('zstd:adaptive') }), {
    log: createLogger({ level: 'silent' }),
    clock,
    threadsLeft
  })
}

/**
 * One batch every 200 ms: closed, then handed back by the event loop `replyLagMs` after it closed, with the
 * thread's own account `timing` (none: sealed on the event loop, at `cpuSeconds`), while buffer.memory holds
 * `bufferedBytes`. Returns the level of each batch.
 */
function feed(
  batches: number,
  replyLagMs: number,
  timing: SealTiming | undefined,
  bufferedBytes: number,
  threadsLeft?: () => number,
  cpuSeconds = timing?.wallSeconds ?? 0
): number[] {
  const clock = fakeClock(0)
  const subject = levels(clock, threadsLeft)
  const seen: number[] = []
  for (let i = 0; i < batches; i++) {
    clock.ms += 200
    const spec = subject.sealing('t', BATCH)
    seen.push(spec.level as number)
    const closedAt = clock.ms
    clock.ms += replyLagMs
    subject.sealed(
      't',
      spec,
      BATCH,
      closedAt,
      bufferedBytes,
      {
        bytes: Buffer.alloc(BATCH / 8),
        recordCount: 1000,
        uncompressedBytes: BATCH,
        compressCpuSeconds: cpuSeconds,
        firstTimestamp: 0
      },
      timing
    )
    clock.ms -= replyLagMs
  }
  return seen
}

describe('BatchLevels with compression threads', () => {
  it('an event loop that takes the replies late, with buffer.memory full, is not compression falling behind: the level goes up', () => {
    // The thread started each batch at once and spent 10 ms on it; the event loop saw the reply 2 s after the close.
    const seen = feed(100, 2000, { waitedMs: 0, wallSeconds: 0.01 }, 30 * MIB)
    assert.equal(seen[0], 3, 'the codec default')
    assert.ok(
      seen.every((level, i) => i === 0 || level >= (seen[i - 1] as number)),
      `never down: ${seen.join(' ')}`
    )
    assert.equal(seen.at(-1), 9)
  })

  it('a batch that waited for its thread past linger.ms lowers the level, however empty buffer.memory is', () => {
    const seen = feed(10, 600, { waitedMs: 500, wallSeconds: 0.01 }, 0)
    assert.deepEqual(seen.slice(0, 3), [3, 2, 1])
  })

  it('once every compression thread died, the event loop compresses: a saturated loop with buffer.memory full lowers the level, never raises it', () => {
    // Each batch took the event loop 190 of its 200 ms, with no thread's account; the dead thread must not count as idle.
    const seen = feed(30, 190, undefined, 30 * MIB, () => 0, 0.19)
    assert.equal(seen[0], 3, 'the codec default')
    assert.ok(
      seen.every((level, i) => i === 0 || level <= (seen[i - 1] as number)),
      `never up: ${seen.join(' ')}`
    )
    assert.equal(seen.at(-1), 1)
  })
})
