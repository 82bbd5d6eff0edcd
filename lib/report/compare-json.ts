import type { ApplyAs } from '../apply/apply-as.js'
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

/** The `--json` document, as schema/compare-report.schema.json describes it; applyAs when clients were asked about. */
export type CompareReportJson = Omit<CompareReport, 'recommendation'> & {
  readonly recommendation: RecommendationJson | null
  readonly savingsVsNone: SavingsVsNone
  readonly applyAs?: ApplyAs
}

export function compareReportJson(report: CompareReport, apply?: ApplyAs): CompareReportJson {
  const rec = report.recommendation
  return {
    ...report,
    recommendation:
      rec === null
        ? null
        : {
            target: rec.target,
            criterion: rec.criterion,
            reason: recommendationReason(rec, report.settings),
            bytesPerDaySaved: rec.bytesPerDaySaved,
            bytesSavedPerGiB: rec.bytesSavedPerGiB
          },
    savingsVsNone: savingsVsNone(report),
    ...(apply === undefined ? {} : { applyAs: apply })
  }
}

export function renderCompareJson(report: CompareReport, apply?: ApplyAs): string {
  return `${JSON.stringify(compareReportJson(report, apply), null, 2)}\n`
}
