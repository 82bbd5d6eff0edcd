import type { CopierStats, CopyTarget, RefusedPolicy } from '../copier/copier-config.js'

/** How the copy ended up handling what a destination refused. */
export interface CopyRefusals {
  readonly onRefused: RefusedPolicy
  readonly deadLetterTopic: string | undefined
}

/**
 * The line `squeeze copy` ends with. The copier's run throws on any copy neither delivered nor refused-and-handled,
 * so what a finished run counts was delivered, skipped, or sent to the dead-letter topic.
 */
export function copySummary(
  source: string,
  targets: readonly CopyTarget[],
  stats: Readonly<CopierStats>,
  refusals: CopyRefusals
): string {
  const refused =
    stats.refused === 0
      ? ''
      : `, ${stats.refused} copies refused (${refusals.onRefused === 'skip' ? 'skipped' : `sent to ${refusals.deadLetterTopic}`})`
  const skipped = stats.skippedBatches === 0 ? '' : `, ${stats.skippedBatches} unreadable source batches skipped`
  return (
    `copied ${stats.sourceRecords} records from ${source} to ${targets.length} targets ` +
    `(${targets.map((t) => t.topic).join(', ')}); ${stats.commits} commits${refused}${skipped}`
  )
}
