import { seededRandom } from './seeded-random.js'

/**
 * A 95% percentile-bootstrap interval of sum(uncompressed) / sum(stored) over batches: batches are resampled
 * with replacement `rounds` times. Batches, not records, are the unit because a codec's ratio is a property of
 * a whole batch. Seeded, so the same batches give the same interval.
 */
export function bootstrapRatioInterval(
  uncompressed: readonly number[],
  stored: readonly number[],
  rounds = 1000,
  seed = 0x2545f491
): { low: number; high: number } {
  return bootstrapRatioIntervals(uncompressed, [stored], rounds, seed)[0] as { low: number; high: number }
}

/**
 * bootstrapRatioInterval for every target's stored bytes over the same batches at once: each round draws its
 * batches once for all targets, which gives each target the interval it would get alone (same seed, same
 * draws) for one draw instead of one per target.
 */
export function bootstrapRatioIntervals(
  uncompressed: readonly number[],
  storedByTarget: ReadonlyArray<readonly number[]>,
  rounds = 1000,
  seed = 0x2545f491
): Array<{ low: number; high: number }> {
  const n = Math.min(uncompressed.length, ...storedByTarget.map((s) => s.length))
  if (n === 0) return storedByTarget.map(() => ({ low: 0, high: 0 }))
  const next = seededRandom(seed)
  const targets = storedByTarget.length
  const u = Float64Array.from(uncompressed.slice(0, n))
  const stored = storedByTarget.map((s) => Float64Array.from(s.slice(0, n)))
  const ratios = stored.map(() => new Float64Array(rounds))
  const sums = new Float64Array(targets)
  for (let r = 0; r < rounds; r++) {
    let sumU = 0
    sums.fill(0)
    for (let i = 0; i < n; i++) {
      const pick = Math.floor(next() * n)
      sumU += u[pick] as number
      for (let t = 0; t < targets; t++) sums[t] = (sums[t] as number) + ((stored[t] as Float64Array)[pick] as number)
    }
    for (let t = 0; t < targets; t++) {
      const s = sums[t] as number
      ;(ratios[t] as Float64Array)[r] = s === 0 ? 0 : sumU / s
    }
  }
  return ratios.map((list) => {
    list.sort()
    return {
      low: list[Math.floor(0.025 * (rounds - 1))] as number,
      high: list[Math.ceil(0.975 * (rounds - 1))] as number
    }
  })
}
