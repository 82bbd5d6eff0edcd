import { ErrorCodes, SqueezeError } from '../errors.js'
import type {
  CompareTargetResult,
  Recommendation,
  RecommendationCriterion,
  RecommendedPoint
} from './compare-report.js'
import { paretoFront } from './pareto.js'

export interface RecommendOptions {
  /** Most compress CPU seconds per GiB of uncompressed input the operator will pay (--cpu-budget). */
  readonly cpuBudgetSecondsPerGiB?: number
  /** Least ratio the operator needs (--target-ratio). */
  readonly targetRatio?: number
  /**
   * Bytes per second the topic receives uncompressed (what a `none` topic would take in); null when no
   * trustworthy rate exists, and savings are then given per GiB of input only.
   */
  readonly ingressBytesPerSecond: number | null
  readonly replicationFactor: number
  readonly consumers: number
}

const SECONDS_PER_DAY = 86_400
const GIB = 1024 ** 3

/**
 * Picks the target to run. A CPU budget picks the smallest stored size within it; a target ratio picks the
 * cheapest target that reaches it; both together must both hold and the smallest stored size wins. Without
 * either, the knee of the ratio-vs-CPU Pareto front. Null when no target qualifies.
 */
export function recommend(targets: readonly CompareTargetResult[], options: RecommendOptions): Recommendation | null {
  validate(options)
  const candidates = targets.filter(isTrustworthy)
  const { cpuBudgetSecondsPerGiB: budget, targetRatio } = options
  if (budget === undefined && targetRatio === undefined) return byKnee(targets, candidates, options)

  const eligible = candidates.filter(
    (t) =>
      (budget === undefined || t.compressCpuSecondsPerGiB <= budget) &&
      (targetRatio === undefined || t.ratio >= targetRatio)
  )
  if (budget !== undefined) {
    const chosen = first(
      eligible,
      (a, b) => a.storedBytes - b.storedBytes || a.compressCpuSecondsPerGiB - b.compressCpuSecondsPerGiB
    )
    if (chosen === undefined) return null
    return finish(
      targets,
      chosen,
      { criterion: 'cpu-budget', cpuBudgetSecondsPerGiB: budget, targetRatio: targetRatio ?? null },
      options
    )
  }
  const chosen = first(
    eligible,
    (a, b) => a.compressCpuSecondsPerGiB - b.compressCpuSecondsPerGiB || a.storedBytes - b.storedBytes
  )
  if (chosen === undefined) return null
  return finish(targets, chosen, { criterion: 'target-ratio', targetRatio: targetRatio as number }, options)
}

/**
 * The knee: on the Pareto front, with CPU and ratio each scaled to 0..1 between the front's cheapest and
 * dearest point, the point furthest above the straight line joining those two (largest ratio share minus
 * CPU share). Past it, each further step up in ratio costs more CPU share than it gains. CPU stays on a
 * linear scale because CPU is paid linearly. `none` is the baseline rather than a choice, so it only wins
 * when nothing else was measured; ties go to the cheaper point.
 */
function byKnee(
  targets: readonly CompareTargetResult[],
  candidates: readonly CompareTargetResult[],
  options: RecommendOptions
): Recommendation | null {
  const compressed = candidates.filter((t) => t.codec !== 'none')
  const front = paretoFront(compressed.length > 0 ? compressed : candidates)
  const cheapest = front[0]
  const dearest = front[front.length - 1]
  if (cheapest === undefined || dearest === undefined) return null
  const cpuSpan = dearest.compressCpuSecondsPerGiB - cheapest.compressCpuSecondsPerGiB
  const ratioSpan = dearest.ratio - cheapest.ratio
  let chosen = cheapest
  let bestScore = Number.NEGATIVE_INFINITY
  for (const point of front) {
    const cpuShare = cpuSpan > 0 ? (point.compressCpuSecondsPerGiB - cheapest.compressCpuSecondsPerGiB) / cpuSpan : 0
    const ratioShare = ratioSpan > 0 ? (point.ratio - cheapest.ratio) / ratioSpan : 0
    const score = ratioShare - cpuShare
    if (score > bestScore) {
      bestScore = score
      chosen = point
    }
  }
  const next = front[front.indexOf(chosen) + 1]
  return finish(
    targets,
    chosen,
    { criterion: 'best-ratio-per-cpu', undominated: front.length, nextStep: next === undefined ? null : point(next) },
    options
  )
}

/**
 * Bytes `target` saves against `none` per GiB of uncompressed input, counted once per replica and once per
 * consuming group; null without a `none` target.
 */
export function bytesSavedPerGiB(
  targets: readonly CompareTargetResult[],
  target: CompareTargetResult,
  options: RecommendOptions
): number | null {
  const share = savedShareVsNone(targets, target)
  return share === null ? null : GIB * share * (options.replicationFactor + options.consumers)
}

/** The share of `none`'s stored bytes `target` does not store (negative when it stores more); null without a none target. */
export function savedShareVsNone(targets: readonly CompareTargetResult[], target: CompareTargetResult): number | null {
  const none = targets.find((t) => t.codec === 'none')
  if (none === undefined || none.storedBytes <= 0) return null
  return 1 - target.storedBytes / none.storedBytes
}

/** Bytes per day `target` saves against `none`: the per-GiB saving at the ingest rate; null when either is unknown. */
export function bytesPerDaySaved(
  targets: readonly CompareTargetResult[],
  target: CompareTargetResult,
  options: RecommendOptions
): number | null {
  const perGiB = bytesSavedPerGiB(targets, target, options)
  if (perGiB === null || options.ingressBytesPerSecond === null) return null
  return ((options.ingressBytesPerSecond * SECONDS_PER_DAY) / GIB) * perGiB
}

function finish(
  targets: readonly CompareTargetResult[],
  chosen: CompareTargetResult,
  criterion: RecommendationCriterion,
  options: RecommendOptions
): Recommendation {
  return {
    ...criterion,
    target: chosen.target,
    chosen: point(chosen),
    bytesPerDaySaved: bytesPerDaySaved(targets, chosen, options),
    bytesSavedPerGiB: bytesSavedPerGiB(targets, chosen, options)
  }
}

function point(t: CompareTargetResult): RecommendedPoint {
  return {
    target: t.target,
    ratio: t.ratio,
    compressCpuSecondsPerGiB: t.compressCpuSecondsPerGiB,
    storedBytes: t.storedBytes
  }
}

/**
 * A recompressed target's stored bytes are the broker's codec, not this one, and a non-finite figure
 * cannot be ranked: neither may be recommended.
 */
function isTrustworthy(t: CompareTargetResult): boolean {
  return (
    t.recompression.verdict !== 'recompressed' &&
    Number.isFinite(t.ratio) &&
    Number.isFinite(t.compressCpuSecondsPerGiB) &&
    Number.isFinite(t.storedBytes)
  )
}

function first<T>(items: readonly T[], compare: (a: T, b: T) => number): T | undefined {
  return [...items].sort(compare)[0]
}

function validate(options: RecommendOptions): void {
  const problems: string[] = []
  const { cpuBudgetSecondsPerGiB: budget, targetRatio } = options
  if (budget !== undefined && !(Number.isFinite(budget) && budget >= 0))
    problems.push(`--cpu-budget must be a number of CPU seconds per GiB >= 0, got ${budget}`)
  if (targetRatio !== undefined && !(Number.isFinite(targetRatio) && targetRatio > 0))
    problems.push(`--target-ratio must be a number > 0, got ${targetRatio}`)
  const rate = options.ingressBytesPerSecond
  if (rate !== null && !(Number.isFinite(rate) && rate >= 0))
    problems.push(`ingress rate must be bytes per second >= 0, got ${options.ingressBytesPerSecond}`)
  if (!(Number.isInteger(options.replicationFactor) && options.replicationFactor >= 1))
    problems.push(`replication factor must be a whole number >= 1, got ${options.replicationFactor}`)
  if (!(Number.isInteger(options.consumers) && options.consumers >= 0))
    problems.push(`consumers must be a whole number >= 0, got ${options.consumers}`)
  if (problems.length > 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, problems.join('; '))
}
