import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { recommend, type RecommendOptions } from '../../../lib/compare/recommend.js'
import type { Recommendation } from '../../../lib/compare/compare-report.js'
import { SqueezeError } from '../../../lib/errors.js'
import { recommendationReason } from '../../../lib/report/compare-table.js'
import { SAMPLE_TARGETS, target } from './sample-report.js'

const MIB = 1024 * 1024
const base: RecommendOptions = { ingressBytesPerSecond: 1_000_000, replicationFactor: 3, consumers: 2 }

/** The reason as the report layer words it, for the same carriers as `base`. */
function reason(rec: Recommendation | null): string {
  return rec === null ? '' : recommendationReason(rec, base)
}

describe('recommend', () => {
  describe('with a CPU budget', () => {
    it('picks the smallest stored size among targets within the budget', () => {
      const rec = recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 10 })
      assert.equal(rec?.target, 'zstd:3')
      assert.equal(rec?.criterion, 'cpu-budget')
      assert.match(reason(rec), /zstd:3 .*10\.00x.*10\.00 compress CPU s\/GiB.*2\.00 s\/GiB/)
    })

    it('a tighter budget moves the pick to a cheaper codec, a looser one to a stronger one', () => {
      assert.equal(recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 1.5 })?.target, 'lz4:1')
      assert.equal(recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 500 })?.target, 'zstd:19')
    })

    it('counts the budget as inclusive and returns null when nothing fits', () => {
      assert.equal(recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 1.6 })?.target, 'zstd:1')
      assert.equal(
        recommend(
          SAMPLE_TARGETS.filter((t) => t.codec !== 'none'),
          { ...base, cpuBudgetSecondsPerGiB: 1 }
        ),
        null
      )
    })

    it('with a target ratio too, both must hold and the smallest stored size still wins', () => {
      assert.equal(
        recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 100, targetRatio: 8.6 })?.target,
        'zstd:3'
      )
      assert.equal(recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 100, targetRatio: 11 }), null)
    })
  })

  describe('with a target ratio', () => {
    it('picks the cheapest target that reaches the ratio', () => {
      const rec = recommend(SAMPLE_TARGETS, { ...base, targetRatio: 9 })
      assert.equal(rec?.target, 'zstd:1')
      assert.equal(rec?.criterion, 'target-ratio')
      assert.match(reason(rec), /cheapest target reaching 9\.00x: 9\.09x at 1\.60 compress CPU s\/GiB/)
      assert.equal(recommend(SAMPLE_TARGETS, { ...base, targetRatio: 12 })?.target, 'zstd:19')
    })

    it('returns null when no target reaches the ratio', () => {
      assert.equal(recommend(SAMPLE_TARGETS, { ...base, targetRatio: 50 }), null)
    })
  })

  describe('by default', () => {
    it('picks the knee of the Pareto front, not the strongest or the cheapest codec', () => {
      const rec = recommend(SAMPLE_TARGETS, base)
      assert.equal(rec?.target, 'zstd:3')
      assert.equal(rec?.criterion, 'best-ratio-per-cpu')
      assert.match(reason(rec), /10\.00x at 2\.00 compress CPU s\/GiB/)
      assert.match(reason(rec), /next step up, zstd:19, reaches 13\.33x for 120\.00 s\/GiB\.$/)
    })

    it('returns what it chose and why as data (the figures, the front, the next step), no sentences', () => {
      assert.deepEqual(recommend(SAMPLE_TARGETS, base), {
        target: 'zstd:3',
        criterion: 'best-ratio-per-cpu',
        undominated: 4,
        chosen: { target: 'zstd:3', ratio: 10, compressCpuSecondsPerGiB: 2, storedBytes: 10 * MIB },
        nextStep: { target: 'zstd:19', ratio: 100 / 7.5, compressCpuSecondsPerGiB: 120, storedBytes: 7.5 * MIB },
        bytesPerDaySaved: 1_000_000 * 86_400 * (1 - 10 / 100) * 5,
        bytesSavedPerGiB: 1024 ** 3 * (1 - 10 / 100) * 5
      })
      assert.deepEqual(recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 10, targetRatio: 9 }), {
        ...recommend(SAMPLE_TARGETS, { ...base, cpuBudgetSecondsPerGiB: 10 }),
        targetRatio: 9
      })
    })

    it('recommends a codec over none whenever one was measured, and none only when it is all there is', () => {
      assert.equal(recommend([SAMPLE_TARGETS[0]!, target('lz4:1', 50 * MIB, 1)], base)?.target, 'lz4:1')
      assert.equal(recommend([SAMPLE_TARGETS[0]!], base)?.target, 'none')
      assert.equal(recommend([], base), null)
    })

    it('never recommends a target the broker recompressed: its bytes are the broker codec', () => {
      const targets = SAMPLE_TARGETS.map((t) =>
        t.target === 'zstd:3'
          ? { ...t, recompression: { verdict: 'recompressed' as const, batchesChecked: 10, batchesRewritten: 10 } }
          : t
      )
      const rec = recommend(targets, base)
      assert.notEqual(rec?.target, 'zstd:3')
      assert.equal(rec?.target, 'zstd:1')
      assert.notEqual(recommend(targets, { ...base, cpuBudgetSecondsPerGiB: 10 })?.target, 'zstd:3')
    })
  })

  describe('bytes per day saved', () => {
    it('is ingress x 86400 x (1 - stored/none stored) x (replication factor + consumers)', () => {
      const rec = recommend(SAMPLE_TARGETS, base)
      // zstd:3 stores 10 MiB where none stores 100 MiB: 90% of 1 MB/s, carried 3 + 2 times.
      assert.ok(Math.abs((rec?.bytesPerDaySaved ?? 0) - 1_000_000 * 86_400 * 0.9 * 5) < 1e-3)
      assert.match(
        reason(rec),
        /2\.00 compress CPU s\/GiB, saving 362\.10GiB per day against none across 3 replicas and 2 consumers; the next step up/
      )
    })

    it('is null without a none target, while the recommendation still stands', () => {
      const rec = recommend(
        SAMPLE_TARGETS.filter((t) => t.codec !== 'none'),
        base
      )
      assert.equal(rec?.target, 'zstd:3')
      assert.equal(rec?.bytesPerDaySaved, null)
      assert.doesNotMatch(reason(rec), /saving/)
    })

    it('is null when the ingest rate is unknown, and the saving is given per GiB of input instead', () => {
      const rec = recommend(SAMPLE_TARGETS, { ...base, ingressBytesPerSecond: null })
      assert.equal(rec?.target, 'zstd:3')
      assert.equal(rec?.bytesPerDaySaved, null)
      assert.ok(Math.abs((rec?.bytesSavedPerGiB ?? 0) - 1024 ** 3 * 0.9 * 5) < 1e-3)
      assert.match(
        reason(rec),
        /saving 4\.50GiB per GiB of input against none across 3 replicas and 2 consumers \(ingest rate unknown\)/
      )
      assert.ok(
        Math.abs((recommend(SAMPLE_TARGETS, base)?.bytesSavedPerGiB ?? 0) - 1024 ** 3 * 0.9 * 5) < 1e-3,
        'the same per GiB with a known rate'
      )
    })
  })

  it('rejects nonsense options with one config error that names each problem', () => {
    assert.throws(
      () =>
        recommend(SAMPLE_TARGETS, {
          ...base,
          cpuBudgetSecondsPerGiB: -1,
          targetRatio: Number.NaN,
          replicationFactor: 0
        }),
      (err: unknown) =>
        err instanceof SqueezeError &&
        err.code === 'SQUEEZE_ERR_CONFIG_INVALID' &&
        /--cpu-budget/.test(err.message) &&
        /--target-ratio/.test(err.message) &&
        /replication factor/.test(err.message)
    )
  })
})
