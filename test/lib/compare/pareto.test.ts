import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { paretoFront, type TradeOff } from '../../../lib/compare/pareto.js'
import { SAMPLE_TARGETS } from './sample-report.js'

const point = (name: string, compressCpuSecondsPerGiB: number, ratio: number) => ({
  name,
  compressCpuSecondsPerGiB,
  ratio
})

function dominates(a: TradeOff, b: TradeOff): boolean {
  return (
    a.compressCpuSecondsPerGiB <= b.compressCpuSecondsPerGiB &&
    a.ratio >= b.ratio &&
    (a.compressCpuSecondsPerGiB < b.compressCpuSecondsPerGiB || a.ratio > b.ratio)
  )
}

describe('paretoFront', () => {
  it('keeps the undominated targets, cheapest first, and drops gzip levels zstd beats on both axes', () => {
    const front = paretoFront(SAMPLE_TARGETS).map((t) => t.target)
    assert.deepEqual(front, ['none', 'lz4:1', 'zstd:1', 'zstd:3', 'zstd:19'])
  })

  it('drops a point that only ties on CPU but compresses worse, and keeps one copy of exact duplicates', () => {
    const front = paretoFront([point('a', 2, 5), point('b', 2, 4), point('c', 2, 5), point('d', 1, 3)])
    assert.deepEqual(
      front.map((p) => p.name),
      ['d', 'a']
    )
  })

  it('leaves out points whose figures are not finite instead of ranking them', () => {
    const front = paretoFront([
      point('nan', Number.NaN, 9),
      point('inf', 1, Number.POSITIVE_INFINITY),
      point('ok', 3, 2)
    ])
    assert.deepEqual(
      front.map((p) => p.name),
      ['ok']
    )
    assert.deepEqual(paretoFront([]), [])
  })

  it('for any input: no front point is dominated, and every other point is dominated by or equal to a front point', () => {
    const arbPoint = fc.record({
      compressCpuSecondsPerGiB: fc.integer({ min: 0, max: 50 }),
      ratio: fc.integer({ min: 1, max: 30 })
    })
    fc.assert(
      fc.property(fc.array(arbPoint, { maxLength: 30 }), (points) => {
        const front = paretoFront(points)
        for (const f of front) assert.ok(!points.some((p) => dominates(p, f)))
        for (const p of points) {
          assert.ok(
            front.some(
              (f) =>
                dominates(f, p) || (f.compressCpuSecondsPerGiB === p.compressCpuSecondsPerGiB && f.ratio === p.ratio)
            )
          )
        }
        for (let i = 1; i < front.length; i++) {
          assert.ok(
            (front[i] as TradeOff).compressCpuSecondsPerGiB > (front[i - 1] as TradeOff).compressCpuSecondsPerGiB
          )
          assert.ok((front[i] as TradeOff).ratio > (front[i - 1] as TradeOff).ratio)
        }
      })
    )
  })
})
