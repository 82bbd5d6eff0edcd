import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, formatCodecSpec, parseCodecSpec } from '../../../lib/codecs/index.js'
import {
  AdaptiveLevel,
  adaptiveRange,
  type LevelDecision,
  type LevelSignals
} from '../../../lib/producer/adaptive-level.js'
import { fakeClock } from '../../helpers/fake-clock.js'

const MIB = 1024 * 1024
const ZSTD = parseCodecSpec('zstd:adaptive')

/** Compression keeping up: a nearly empty buffer, nothing queued, threads mostly idle. */
function ahead(level: number, secondsPerByte = 1e-9): LevelSignals {
  return {
    bufferedBytes: 2 * MIB,
    bufferMemoryBytes: 32 * MIB,
    queuedBytes: 0,
    idleFraction: 0.8,
    lingerMissed: false,
    sealed: { level, compressSecondsPerByte: secondsPerByte }
  }
}

/** Batches queueing: buffer.memory over half full. */
function behind(level: number, fill = 0.6): LevelSignals {
  return {
    bufferedBytes: fill * 32 * MIB,
    bufferMemoryBytes: 32 * MIB,
    queuedBytes: 8 * MIB,
    idleFraction: 0,
    lingerMissed: false,
    sealed: { level, compressSecondsPerByte: 1e-9 }
  }
}

/** Feeds `signals(level)` every `stepMs` for `ms`, returning every decision taken. */
function run(
  controller: AdaptiveLevel,
  clock: { ms: number },
  ms: number,
  stepMs: number,
  signals: (level: number) => LevelSignals
): LevelDecision[] {
  const decisions: LevelDecision[] = []
  for (let t = 0; t < ms; t += stepMs) {
    clock.ms += stepMs
    const d = controller.observe(signals(controller.level))
    if (d !== null) decisions.push(d)
  }
  return decisions
}

describe('codec:adaptive as a codec spec', () => {
  it('parses zstd, gzip and lz4 adaptive, prints them back, and refuses codecs without levels', () => {
    for (const codec of ['zstd', 'gzip', 'lz4']) {
      const spec = parseCodecSpec(`${codec}:ADAPTIVE`)
      assert.deepEqual(spec, { codec, level: null, adaptive: true })
      assert.equal(formatCodecSpec(spec), `${codec}:adaptive`)
    }
    assert.throws(() => parseCodecSpec('snappy:adaptive'), /snappy has no levels to adapt/)
    assert.throws(() => parseCodecSpec('none:adaptive'), /none has no levels to adapt/)
    assert.throws(() => createCodec(ZSTD), /needs a level per batch/)
  })

  it("ranges default to where levels change anything, and level.min/max are clamped to the codec's range", () => {
    assert.deepEqual(adaptiveRange('zstd'), { min: 1, max: 19 })
    assert.deepEqual(adaptiveRange('gzip'), { min: 1, max: 9 })
    assert.deepEqual(adaptiveRange('lz4'), { min: 1, max: 12 })
    assert.deepEqual(adaptiveRange('zstd', -200_000, 40), { min: -131072, max: 22 })
    assert.deepEqual(adaptiveRange('gzip', 0, 19), { min: 1, max: 9 })
    assert.throws(() => adaptiveRange('zstd', 9, 3), /level.min \(9\) is above squeeze.compression.level.max \(3\)/)
  })
})

describe('AdaptiveLevel under pressure', () => {
  it('starts at the codec default and raises one level at a time, at most one a second, while compression keeps up', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock })
    assert.equal(controller.level, 3)
    const decisions = run(controller, clock, 30_000, 100, (level) => ahead(level))
    assert.ok(decisions.length > 10)
    for (const d of decisions)
      assert.deepEqual(
        { direction: d.direction, reason: d.reason, step: d.to - d.from },
        { direction: 'up', reason: 'idle', step: 1 }
      )
    assert.equal(controller.level, 19, 'up to the default max')
    assert.deepEqual(controller.spec, { codec: 'zstd', level: 19 })
  })

  it('does not raise while idle time is short or the buffer holds more than a quarter of buffer.memory', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock })
    assert.deepEqual(
      run(controller, clock, 10_000, 100, (level) => ({ ...ahead(level), idleFraction: 0.1 })),
      []
    )
    assert.deepEqual(
      run(controller, clock, 10_000, 100, (level) => ({ ...ahead(level), bufferedBytes: 12 * MIB })),
      []
    )
    assert.equal(controller.level, 3)
  })

  it('lowers at the first batch that finds buffer.memory half full or its linger deadline missed, one step per batch at the new level', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, min: 1, max: 9 })
    run(controller, clock, 20_000, 100, (level) => ahead(level))
    assert.equal(controller.level, 9)
    clock.ms += 10
    assert.deepEqual(controller.observe(behind(9)), { from: 9, to: 8, direction: 'down', reason: 'buffer' })
    // Batches queued before the change were compressed at 9: they say nothing about 8.
    assert.equal(controller.observe(behind(9)), null)
    assert.equal(controller.level, 8)
    assert.deepEqual(controller.observe({ ...ahead(8), lingerMissed: true }), {
      from: 8,
      to: 7,
      direction: 'down',
      reason: 'linger'
    })
  })

  it('jumps half-way to the minimum when buffer.memory is nearly full', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, min: 1, max: 19 })
    run(controller, clock, 40_000, 100, (level) => ahead(level))
    assert.equal(controller.level, 19)
    assert.deepEqual(controller.observe(behind(19, 0.9)), { from: 19, to: 10, direction: 'down', reason: 'buffer' })
    assert.deepEqual(controller.observe(behind(19, 0.9)), { from: 10, to: 5, direction: 'down', reason: 'buffer' })
    run(controller, clock, 1000, 10, (level) => behind(level, 0.9))
    assert.equal(controller.level, 1, 'never below the minimum')
  })

  it('hysteresis: a level that falls behind each time it is tried is retried ever more rarely, not every second', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, min: 1, max: 19 })
    // Level 6 and up cannot keep up; 5 and below can.
    const decisions = run(controller, clock, 300_000, 100, (level) => (level >= 6 ? behind(level) : ahead(level)))
    const upsTo6 = decisions.filter((d) => d.direction === 'up' && d.to === 6).length
    assert.ok(upsTo6 >= 3, `6 is retried now and then (${upsTo6} times)`)
    // Holds of 2, 4, 8 ... s capped at 60 s: about 10 tries in 300 s, where a plain one-a-second rule makes ~150.
    assert.ok(upsTo6 <= 11, `but with a doubling hold: ${upsTo6} tries in 300 s`)
    assert.ok(controller.level === 5 || controller.level === 6)
    assert.ok(
      decisions.filter((d) => d.direction === 'down').every((d) => d.to === 5),
      'pressure at 6 never pushed it below 5'
    )
  })

  it('does not raise to a level whose measured cost would leave the compression thread too busy', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, min: 1, max: 9 })
    // Level 4 measured at 3x level 3's cost, once (for example before the data changed): at 40% busy, 4 would be 120%.
    controller.observe({ ...ahead(4, 3e-9), bufferedBytes: 20 * MIB })
    const decisions = run(controller, clock, 20_000, 100, (level) => ({ ...ahead(level, 1e-9), idleFraction: 0.6 }))
    assert.deepEqual(decisions, [])
    assert.equal(controller.level, 3)
  })
})

describe('AdaptiveLevel with compression threads of its own', () => {
  /** Threads 80% idle, no batch waiting for one, and buffer.memory `fill` full: the event loop or the network is behind. */
  const filledElsewhere = (level: number, fill: number): LevelSignals => ({
    ...ahead(level),
    ownThreads: true,
    bufferedBytes: fill * 32 * MIB,
    queuedBytes: 4 * MIB
  })

  it('a buffer.memory filled while the threads idle neither lowers the level nor keeps it from going up', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, min: 1, max: 9 })
    const decisions = run(controller, clock, 20_000, 100, (level) => filledElsewhere(level, 0.95))
    assert.ok(decisions.length > 0)
    assert.ok(
      decisions.every((d) => d.direction === 'up' && d.reason === 'idle'),
      JSON.stringify(decisions.filter((d) => d.direction === 'down'))
    )
    assert.equal(controller.level, 9)
  })

  it('lowers when the threads are what fills buffer.memory, or a batch waited for a thread past linger.ms', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, min: 1, max: 9 })
    run(controller, clock, 20_000, 100, (level) => filledElsewhere(level, 0.6))
    assert.equal(controller.level, 9)
    // behind(): threads never idle. Smoothed, the busy share crosses 70% within a few batches.
    const busy = run(controller, clock, 500, 100, (level) => ({ ...behind(level), ownThreads: true }))
    assert.ok(
      busy.length > 0 && busy.every((d) => d.direction === 'down' && d.reason === 'buffer'),
      JSON.stringify(busy)
    )
    run(controller, clock, 20_000, 100, (level) => filledElsewhere(level, 0.6))
    const from = controller.level
    clock.ms += 100
    assert.deepEqual(controller.observe({ ...filledElsewhere(from, 0), lingerMissed: true }), {
      from,
      to: from - 1,
      direction: 'down',
      reason: 'linger'
    })
  })
})

describe('AdaptiveLevel with a CPU budget', () => {
  /** A data set where level L costs L x `scale` CPU seconds per GiB. */
  const costOf = (level: number, scale: number): number => (level * scale) / 2 ** 30

  it('settles on the highest level whose measured cost fits, and re-measures as the data changes', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, cpuBudgetSecondsPerGiB: 5.5 })
    let scale = 1
    const signals = (level: number): LevelSignals => ({ ...ahead(level, costOf(level, scale)), idleFraction: 0.5 })
    run(controller, clock, 20_000, 100, signals)
    assert.equal(controller.level, 5, '5 s/GiB fits 5.5, 6 does not')
    const settled = run(controller, clock, 20_000, 100, signals)
    assert.ok(settled.every((d) => d.reason === 'budget'))
    assert.ok(
      settled.length <= 2,
      `level 6 is re-measured at most once in 20 s, not flapped (${settled.length} changes)`
    )
    // The data gets twice as cheap to compress: after the old figures go stale, higher levels are tried.
    scale = 0.5
    run(controller, clock, 120_000, 100, signals)
    // Then 11 most of the time (11 x 0.5 = 5.5 s/GiB fits), and 12 only while it is measured again now and then.
    const time = new Map<number, number>()
    for (let t = 0; t < 60_000; t += 100) {
      clock.ms += 100
      controller.observe(signals(controller.level))
      time.set(controller.level, (time.get(controller.level) ?? 0) + 100)
    }
    assert.deepEqual(
      [...time.keys()].sort((a, b) => a - b).filter((l) => l !== 12),
      [11]
    )
    assert.ok((time.get(11) ?? 0) >= 55_000, `at 11 for ${time.get(11)} ms of 60 s`)
    assert.ok(Math.abs((controller.costsPerGiB().get(11) ?? 0) - 5.5) < 1e-9)
  })

  it('the budget is a ceiling: falling behind still lowers the level below it', () => {
    const clock = fakeClock(0)
    const controller = new AdaptiveLevel(ZSTD, { clock, cpuBudgetSecondsPerGiB: 100 })
    run(controller, clock, 30_000, 100, (level) => ahead(level, costOf(level, 1)))
    assert.equal(controller.level, 19)
    assert.deepEqual(controller.observe(behind(19)), { from: 19, to: 18, direction: 'down', reason: 'buffer' })
  })

  it('refuses a budget that is not above zero', () => {
    assert.throws(
      () => new AdaptiveLevel(ZSTD, { clock: fakeClock(0), cpuBudgetSecondsPerGiB: 0 }),
      /cpu.budget must be above 0/
    )
  })
})
