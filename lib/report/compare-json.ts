import type { CompareReport, Recommendation } from '../compare/compare-report.js'
import { savingsVsNone, type SavingsVsNone } from '../compare/savings.js'
import { recommendationReason } from './compare-table.js'

/** The recommendation as schema/compare-report.schema.json has it: the pick, the rule, the reason in words, the savings. */
export interface RecommendationJson {
  readonly target: string
  readonly criterion: Recommendation['criterion']
  readonly reason: string
  readonly bytesPerDaySaved: number | null
  readonly bytesSavedPerGiB: number | null
}

/** The `--json` document, as schema/compare-report.schema.json describes it. */
export type CompareReportJson = Omit<CompareReport, 'recommendation'> & { readonly recommendation: RecommendationJson | null; readonly savingsVsNone: SavingsVsNone }

export function compareReportJson(report: CompareReport): CompareReportJson {
  const rec = report.recommendation
  return {
    ...report,
    recommendation: rec === null ? null : {
      target: rec.target,
      criterion: rec.criterion,
      reason: recommendationReason(rec, report.settings),
      bytesPerDaySaved: rec.bytesPerDaySaved,
      bytesSavedPerGiB: rec.bytesSavedPerGiB
    },
    savingsVsNone: savingsVsNone(report)
  }
}

export function renderCompareJson(report: CompareReport): string {
  return `${JSON.stringify(compareReportJson(report), null, 2)}\n`
}
