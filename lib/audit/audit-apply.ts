import { applyAs, type ApplyAs } from '../apply/apply-as.js'
import type { ClientName } from '../apply/client-limits.js'
import { verdictRule } from '../apply/compare-verdicts.js'
import type { CompareReport } from '../compare/compare-report.js'
import type { TopicFacts } from './audit-report.js'

/**
 * A topic's verdict as settings per client, by the rule the verdict came from: the projection's recommendation
 * (with the topic's own rate, replication and groups) when it stores at most (1 - margin) of today's bytes, else
 * the cheapest such point of the front. A client that can set none of the rows meeting it gets no target. Null
 * when no client is named or the verdict is to keep today's codec: there is nothing to change. A topic whose compression.type names a codec
 * gets the topic-side change, since the broker recompresses whatever the producers send.
 */
export function auditApplyAs(
  report: CompareReport,
  facts: TopicFacts,
  options: {
    readonly clients: readonly ClientName[]
    readonly brokers: string
    readonly change: boolean
    readonly batchShares?: ReadonlyMap<string, readonly number[]> | undefined
  }
): ApplyAs | null {
  const baseline = report.current
  if (options.clients.length === 0 || !options.change || baseline === null || baseline === undefined) return null
  const rule = verdictRule(report, { consumers: report.settings.consumers })
  const recompresses = facts.compressionType !== null && facts.compressionType !== 'producer'
  return applyAs(report, options.clients, rule, {
    brokers: options.brokers,
    topic: facts.topic,
    topicMode: recompresses ? 'codec' : 'producer',
    ...(options.batchShares === undefined ? {} : { batchShares: options.batchShares })
  })
}
