import { recommendFor, type CompareOutcome, type CompareRunOptions } from '../compare/run-compare.js'
import { applyAs, type ApplyAs } from './apply-as.js'
import type { ClientName } from './client-limits.js'
import type { TopicCompressionMode } from './topic-config.js'

/**
 * A compare's verdict per client, by the recommendation's own rule and options. A filled source's topic and broker
 * are throwaways (`brokers` undefined), so its settings name placeholders.
 */
export function compareVerdicts(
  outcome: CompareOutcome,
  settings: { clients: readonly ClientName[]; topicMode: TopicCompressionMode; sourceTopic: string },
  compare: Pick<CompareRunOptions, 'consumers' | 'cpuBudgetSecondsPerGiB' | 'targetRatio'>,
  brokers: string | undefined
): ApplyAs {
  const { report } = outcome
  const rule = (rows: Parameters<typeof recommendFor>[0]): ReturnType<typeof recommendFor> =>
    recommendFor(rows, compare, report.source.ingestRate, report.settings.replicationFactor)
  return applyAs(report, settings.clients, rule, {
    brokers: brokers ?? '<brokers>',
    topic: brokers === undefined ? '<topic>' : settings.sourceTopic,
    topicMode: settings.topicMode,
    ...(outcome.batchShares === undefined ? {} : { batchShares: outcome.batchShares })
  })
}
