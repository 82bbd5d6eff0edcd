import type { CompareReport } from '../compare/compare-report.js'
import { savingsVsNone, type SavingVsNone } from '../compare/savings.js'
import { formatLargeBytes } from './table.js'

/** What the disk and fetch figures are multiplied by, in words a header or a sentence can carry. */
function carriers({ replicationFactor: rf, consumers }: CompareReport['settings']): { disk: string; fetch: string } {
  return {
    disk: `x${rf} replica${rf === 1 ? '' : 's'}`,
    fetch: `x${consumers} consumer group${consumers === 1 ? '' : 's'}`
  }
}

function bytesOrDash(bytes: number | null): string {
  return bytes === null ? '-' : formatLargeBytes(bytes)
}

/**
 * Bytes saved per target, on disk and in fetch traffic apart: against none, and against what the topic stores
 * today when that was read. Per day at the ingest rate when it is known, else per GiB of input; the headers say which.
 */
export function savingsTable(
  report: CompareReport,
  wide = true
): { title: string; headers: string[]; rows: string[][] } {
  const savings = savingsVsNone(report)
  const perDay = savings.ingestBytesPerDay !== null
  const unit = perDay ? 'bytes/day' : 'bytes/GiB of input'
  const { disk, fetch } = carriers(report.settings)
  const current = report.current?.savings ?? null
  const headers = wide
    ? [
        'target',
        `disk ${unit} saved vs none (${disk})`,
        `fetch ${unit} saved vs none (${fetch})`,
        ...(current === null
          ? []
          : [`disk ${unit} saved vs current (${disk})`, `fetch ${unit} saved vs current (${fetch})`])
      ]
    : ['target', 'disk vs none', 'fetch vs none', ...(current === null ? [] : ['disk vs current', 'fetch vs current'])]
  const rows = savings.targets.map((s, i) => {
    const c = current?.[i]
    const vsCurrent =
      c === undefined
        ? []
        : perDay
          ? [c.storedBytesPerDaySaved, c.fetchBytesPerDaySaved]
          : [c.storedBytesSavedPerGiB, c.fetchBytesSavedPerGiB]
    return [
      s.target,
      ...(perDay
        ? [s.storedBytesPerDaySaved, s.fetchBytesPerDaySaved]
        : [s.storedBytesSavedPerGiB, s.fetchBytesSavedPerGiB]),
      ...vsCurrent
    ].map((v) => (typeof v === 'string' ? v : bytesOrDash(v)))
  })
  if (!wide) {
    const rate = perDay
      ? `per day at the ingest rate (${formatLargeBytes(savings.ingestBytesPerDay as number)}/day uncompressed)`
      : 'per GiB of input (ingest rate unknown)'
    return { title: `bytes saved ${rate}; disk ${disk}, fetch ${fetch}:`, headers, rows }
  }
  const title = perDay
    ? `bytes saved per day at the ingest rate (${formatLargeBytes(savings.ingestBytesPerDay as number)}/day uncompressed), on disk across every replica and in fetch traffic once per consumer group:`
    : 'bytes saved per GiB of input (no trustworthy ingest rate), on disk across every replica and in fetch traffic once per consumer group:'
  return { title, headers, rows }
}

/** One target's saving against none as words: "D on disk (x3 replicas) + F of fetch traffic (x2 consumer groups) = T". */
export function savingSplitText(report: CompareReport, target: string, per: 'day' | 'GiB'): string | null {
  const s: SavingVsNone | undefined = savingsVsNone(report).targets.find((t) => t.target === target)
  const [stored, fetched] =
    per === 'day'
      ? [s?.storedBytesPerDaySaved, s?.fetchBytesPerDaySaved]
      : [s?.storedBytesSavedPerGiB, s?.fetchBytesSavedPerGiB]
  if (stored === null || stored === undefined || fetched === null || fetched === undefined) return null
  const { disk, fetch } = carriers(report.settings)
  return `${formatLargeBytes(stored)} on disk (${disk}) + ${formatLargeBytes(fetched)} of fetch traffic (${fetch}) = ${formatLargeBytes(stored + fetched)}${per === 'day' ? '/day' : ''}`
}
