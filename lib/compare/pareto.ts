/** The two figures a codec trade-off is judged on: what compressing costs and what it saves. */
export interface TradeOff {
  readonly compressCpuSecondsPerGiB: number
  readonly ratio: number
}

/**
 * The targets no other target beats on both CPU (lower is better) and ratio (higher is better), cheapest
 * first, so ratio rises strictly along the result. Points with a non-finite figure cannot be compared and
 * are left out. Exact duplicates keep only the first, so the front is deterministic in the input order.
 */
export function paretoFront<T extends TradeOff>(points: readonly T[]): T[] {
  const ordered = points
    .map((point, index) => ({ point, index }))
    .filter(({ point }) => Number.isFinite(point.compressCpuSecondsPerGiB) && Number.isFinite(point.ratio))
    .sort(
      (a, b) =>
        a.point.compressCpuSecondsPerGiB - b.point.compressCpuSecondsPerGiB ||
        b.point.ratio - a.point.ratio ||
        a.index - b.index
    )
  const front: T[] = []
  let bestRatio = Number.NEGATIVE_INFINITY
  for (const { point } of ordered) {
    // Anything at least as expensive as a kept point must compress strictly better to stay undominated.
    if (point.ratio > bestRatio) {
      front.push(point)
      bestRatio = point.ratio
    }
  }
  return front
}
