import { verdictOver } from '../compare/baseline.js'
import type { CompareReport, CompareTargetResult, Recommendation } from '../compare/compare-report.js'
import { recommendFor, type CompareOutcome, type CompareRunOptions } from '../compare/run-compare.js'
import { applyAs, type ApplyAs } from './apply-as.js'
import type { PickRule } from './best-target.js'
import type { ClientName } from './client-limits.js'
import type { TopicCompressionMode } from './topic-config.js'

type RecommendOptions = Pick<CompareRunOptions, 'consumers' | 'cpuBudgetSecondsPerGiB' | 'targetRatio'>

/**
 * The rule a report's changes are picked by: the recommendation's, over some rows; and where the report has today's
 * batches (`current`), the verdict against them: the recommendation when it stores at most (1 - margin) of today's
 * bytes, else the cheapest such point of the front, else none (keep what is there). Compare and the audit both
 * apply what their verdict says, not a target that stores more than the topic does today.
 */
export function verdictRule(report: CompareReport, options: RecommendOptions): PickRule {
  const recommendation = (rows: readonly CompareTargetResult[]): Recommendation | null =>
    recommendFor(rows, options, report.source.ingestRate, report.settings.replicationFactor)
  const baseline = report.current
  if (baseline === null || baseline === undefined) return recommendation
  return (rows) => {
    const verdict = verdictOver(baseline.savings, rows, recommendation(rows))
    return verdict.action === 'change' ? { target: verdict.target } : null
  }
}

/**
 * A compare's verdict per client, by the rule of verdictRule. A filled source's topic and broker are throwaways
 * (`brokers` undefined), so its settings name placeholders.
 */
export function compareVerdicts(
  outcome: CompareOutcome,
  settings: { clients: readonly ClientName[]; topicMode: TopicCompressionMode; sourceTopic: string },
  compare: RecommendOptions,
  brokers: string | undefined
): ApplyAs {
  const { report } = outcome
  const verdict = report.current?.verdict
  return applyAs(report, settings.clients, verdictRule(report, compare), {
    brokers: brokers ?? '<brokers>',
    topic: brokers === undefined ? '<topic>' : settings.sourceTopic,
    topicMode: settings.topicMode,
    ...(verdict?.action === 'keep' ? { keep: report.current?.row.codec ?? null } : {}),
    ...(outcome.batchShares === undefined ? {} : { batchShares: outcome.batchShares })
  })
}
