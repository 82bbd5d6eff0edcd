import type { LevelShare } from './compare-report.js'

/** Each level the batches were compressed at, lowest first, with its share of their uncompressed bytes. */
export function levelMix(
  batches: ReadonlyArray<{ readonly level: number | null; readonly uncompressedBytes: number }>
): LevelShare[] {
  const bytes = new Map<number, number>()
  let total = 0
  for (const b of batches) {
    if (b.level === null) continue
    bytes.set(b.level, (bytes.get(b.level) ?? 0) + b.uncompressedBytes)
    total += b.uncompressedBytes
  }
  return [...bytes].sort(([a], [b]) => a - b).map(([level, n]) => ({ level, share: total === 0 ? 0 : n / total }))
}
