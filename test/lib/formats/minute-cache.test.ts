import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseCombinedTime } from '../../../lib/formats/combined-log.js'
import { MinuteCache } from '../../../lib/formats/minute-cache.js'

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const two = (n: number): string => String(n).padStart(2, '0')

describe("MinuteCache: the previous line's minute serves the next line", () => {
  it('answers only for the same text but for its two seconds digits', () => {
    const cache = new MinuteCache(18)
    const base = Date.UTC(2015, 4, 17, 10, 5, 0)
    cache.store('17/May/2015:10:05:03 +0000', base + 3000, 3)
    assert.equal(cache.lookup('17/May/2015:10:05:59 +0000'), base + 59_000)
    assert.equal(cache.lookup('17/May/2015:10:05:03 +0000'), base + 3000)
    for (const other of [
      '17/May/2015:10:06:03 +0000',
      '17/May/2015:10:05:03 +0100',
      '17/May/2015:10:05:0x +0000',
      '17/May/2015:10:05:03 +00000',
      ''
    ]) {
      assert.ok(Number.isNaN(cache.lookup(other)), other)
    }
  })

  it('parseCombinedTime gives what the fields say for any sequence of times (same minute, next minute, zone change)', () => {
    const time = fc.record({
      day: fc.integer({ min: 1, max: 28 }),
      month: fc.integer({ min: 0, max: 11 }),
      year: fc.integer({ min: 1970, max: 2100 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 99 }),
      zoneMin: fc.constantFrom(0, 60, -90, 330)
    })
    // Runs of one minute with different seconds are the case the cache serves; mixing runs checks it lets go.
    const run = fc
      .tuple(time, fc.array(fc.integer({ min: 0, max: 99 }), { maxLength: 5 }))
      .map(([t, seconds]) => [t, ...seconds.map((second) => ({ ...t, second }))])
    fc.assert(
      fc.property(fc.array(run, { minLength: 1, maxLength: 6 }), (runs) => {
        for (const t of runs.flat()) {
          const zone = `${t.zoneMin < 0 ? '-' : '+'}${two(Math.floor(Math.abs(t.zoneMin) / 60))}${two(Math.abs(t.zoneMin) % 60)}`
          const text = `${two(t.day)}/${MONTHS[t.month]}/${t.year}:${two(t.hour)}:${two(t.minute)}:${two(t.second)} ${zone}`
          const expected = Date.UTC(t.year, t.month, t.day, t.hour, t.minute, t.second) - t.zoneMin * 60_000
          assert.equal(parseCombinedTime(text), BigInt(expected) * 1_000_000n, text)
        }
      }),
      { numRuns: 300 }
    )
  })
})
