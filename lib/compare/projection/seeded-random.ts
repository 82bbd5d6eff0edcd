/**
 * xorshift32: numbers in [0, 1) from a 32-bit seed, the same sequence for the same seed, so a resampling or a
 * pick of batches is the same from run to run. Statistical sampling needs no cryptographic strength.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state / 2 ** 32
  }
}
