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
  const n = Math.min(uncompressed.length, stored.length)
  if (n === 0) return { low: 0, high: 0 }
  let state = seed >>> 0
  const next = (): number => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state / 2 ** 32
  }
  const ratios = new Float64Array(rounds)
  for (let r = 0; r < rounds; r++) {
    let u = 0
    let s = 0
    for (let i = 0; i < n; i++) {
      const pick = Math.floor(next() * n)
      u += uncompressed[pick] as number
      s += stored[pick] as number
    }
    ratios[r] = s === 0 ? 0 : u / s
  }
  ratios.sort()
  return {
    low: ratios[Math.floor(0.025 * (rounds - 1))] as number,
    high: ratios[Math.ceil(0.975 * (rounds - 1))] as number
  }
}
