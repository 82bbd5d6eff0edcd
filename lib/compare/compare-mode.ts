import type { LogKind } from '../formats/index.js'
import { missingCopyAcl } from './copy-acl.js'
import { runProjection, type ProjectionRunOptions } from './projection/run-projection.js'
import { runCompare, type CompareOutcome, type CompareRunOptions } from './run-compare.js'

/** --mode projection's own settings; the mode is copy when they are absent. */
export type ProjectionModeOptions = Pick<ProjectionRunOptions, 'threads' | 'sweep' | 'sample'>

/** What the run gets once its cluster is up and its source is there. */
export type CompareRunContext = Pick<
  CompareRunOptions,
  'connection' | 'sourceDescription' | 'rateEvidence' | 'log' | 'signal' | 'onProgress'
>

/** The settings both modes read, as the command validated them. */
export type CompareModeSettings = Omit<CompareRunOptions, keyof CompareRunContext>

/**
 * Copy mode writes a topic per target; projection re-batches and compresses in memory and creates nothing.
 * A copy refused for want of an ACL names the ACL it needs.
 */
export async function runCompareMode(
  compare: CompareModeSettings,
  projection: ProjectionModeOptions | undefined,
  formatName: LogKind | 'none',
  run: CompareRunContext
): Promise<CompareOutcome> {
  if (projection === undefined) {
    return runCompare({ ...compare, ...run }).catch((err: unknown) => {
      throw missingCopyAcl(err, compare.sourceTopic) ?? err
    })
  }
  return runProjection({
    ...run,
    sourceTopic: compare.sourceTopic,
    targets: compare.targets,
    format: formatName === 'none' ? null : formatName,
    // HTTP records get the copy mode's format rows, from the sample's batches as the audit builds them.
    formatRows: formatName === 'http',
    batching: compare.producer,
    ...projection,
    ...(compare.maxRecords === undefined ? {} : { maxRecords: compare.maxRecords }),
    ...(compare.maxBytes === undefined ? {} : { maxBytes: compare.maxBytes }),
    consumers: compare.consumers,
    read: compare.read,
    ...(compare.cpuBudgetSecondsPerGiB === undefined ? {} : { cpuBudgetSecondsPerGiB: compare.cpuBudgetSecondsPerGiB }),
    ...(compare.targetRatio === undefined ? {} : { targetRatio: compare.targetRatio }),
    version: compare.version
  })
}
