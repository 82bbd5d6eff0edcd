import type { BatchingLimit, CurrentBaseline, LargerBatchesToday, SavingVsCurrent } from '../compare/baseline.js'
import type { CompareReport } from '../compare/compare-report.js'
import { isKnownRate } from '../compare/ingest-rate.js'
import { formatBytes, formatLargeBytes, formatNumber } from './table.js'

/** The baseline in one line: codec or mix, how its producers batched, what reading it costs. */
export function currentSummary({ row }: CurrentBaseline): string {
  const codecs =
    row.codecs.length === 1
      ? row.codec
      : `mix of ${row.codecs.map((c) => `${c.codec} ${formatNumber((100 * c.storedBytes) / row.storedBytes, 0)}%`).join(', ')} of stored bytes`
  const corrupt =
    row.corruptBatches === 0
      ? ''
      : `; ${row.corruptBatches} source batch${row.corruptBatches === 1 ? '' : 'es'} did not read and are left out`
  return (
    `${row.label}: ${codecs}, ${formatBytes(row.storedBytes)} in ${row.batches} batches (sum of the source batches' sizes), ` +
    `${formatNumber(row.meanRecordsPerBatch, 1)} records per batch, batch size median ${formatBytes(row.batchBytes.median)} ` +
    `(p10 ${formatBytes(row.batchBytes.p10)}, p90 ${formatBytes(row.batchBytes.p90)}), decompress ${formatNumber(row.decompressCpuSecondsPerGiB)} cpu s/GiB${corrupt}`
  )
}

/** The recommendation against what is stored today, then, when today's batches are small, how much is batching. */
export function againstCurrentLines(report: CompareReport): string[] {
  const { current } = report
  if (current === null) return []
  return [
    verdictLine(report, current),
    ...largerBatchesLines(report, current.largerBatchesToday),
    ...batchingLines(current.batchingLimit)
  ]
}

function verdictLine(report: CompareReport, current: CurrentBaseline): string {
  const { verdict, row } = current
  const margin = `a change needs to store at most ${formatNumber(1 - verdict.margin)}x of today's bytes (a ${formatNumber(100 * verdict.margin, 0)}% margin)`
  if (verdict.action === 'keep') {
    const best =
      verdict.best === null
        ? ''
        : `; the best on the front, ${verdict.best.target}, stores ${formatNumber(verdict.best.storedShare)}x`
    return `against current (${row.codec}): keep what you have: no target on the ratio-vs-CPU front beats it by the margin; ${margin}${best}`
  }
  const saving = current.savings.find((s) => s.target === verdict.target) as SavingVsCurrent
  return `against current (${row.codec}): change to ${verdict.target}: it stores ${formatNumber(verdict.storedShare)}x of what you store now, ${savingText(report, saving)}; ${margin}`
}

/** Per day at the ingest rate when there is one, else per GiB of input: on disk across replicas, and in fetch traffic across consumers. */
export function savingText(report: CompareReport, s: SavingVsCurrent): string {
  const { replicationFactor: rf, consumers } = report.settings
  const carriers = (disk: number, fetch: number): string =>
    `${formatLargeBytes(disk)} on disk (x replication factor ${rf}) and ${formatLargeBytes(fetch)} of fetch traffic (x ${consumers} consumer${consumers === 1 ? '' : 's'})`
  if (s.storedBytesPerDaySaved !== null && s.fetchBytesPerDaySaved !== null)
    return `saving ${carriers(s.storedBytesPerDaySaved, s.fetchBytesPerDaySaved)} per day`
  const why = isKnownRate(report.source.ingestRate) ? '' : ' (no trustworthy ingest rate)'
  return `saving ${carriers(s.storedBytesSavedPerGiB, s.fetchBytesSavedPerGiB)} per GiB of input${why}`
}

function largerBatchesLines(report: CompareReport, larger: LargerBatchesToday | null): string[] {
  if (larger === null) return []
  const why =
    report.mode === 'projection'
      ? "the projection closes batches on the records' own timestamps, and these advance more slowly than the topic's producer packed the records (a backfill, a replay, or timestamps set to event time); --linger-ms LIST shows longer lingers."
      : 'the copier batches on its own clock as it copies; -X linger.ms and -X batch.size set how it batches.'
  return [
    `today's batches are larger: ${formatNumber(larger.currentRecordsPerBatch, 1)} records per batch, ${formatNumber(larger.factor, 0)}x the ${formatNumber(larger.targetRecordsPerBatch, 1)} of squeeze's targets, ` +
      `re-batched at linger.ms/batch.size ${larger.lingerMs}/${formatBytes(larger.batchSizeBytes)}; the targets' ratios are for their smaller batches.`,
    `  ${why}`
  ]
}

function batchingLines(limit: BatchingLimit | null): string[] {
  if (limit === null) return []
  const small =
    `today's batches are small (median ${formatBytes(limit.medianBatchBytes)}, under ${formatBytes(limit.thresholds.medianBatchBytes)}, ` +
    `or ${formatNumber(limit.meanRecordsPerBatch, 1)} records per batch, under ${limit.thresholds.recordsPerBatch})`
  const rebatched = `squeeze's targets were re-batched at linger.ms/batch.size ${limit.lingerMs}/${limit.batchSizeBytes}`
  const lines = [`batching is the limit: ${small}; ${rebatched}.`]
  if (limit.rebatched === null) {
    lines.push('  add the current codec to --targets to split the gain between batching and codec.')
  } else {
    lines.push(
      `  ${limit.rebatched.target} re-batched alone stores ${formatNumber(limit.rebatched.storedShare)}x of today's bytes.`
    )
  }
  if (limit.split !== null) {
    const { target, fromBatching, fromCodec } = limit.split
    lines.push(
      `  of ${target}'s saving (${formatNumber(100 * (fromBatching + fromCodec), 0)}% of today's bytes), ` +
        `${formatNumber(100 * fromBatching, 0)}% comes from batching and ${formatNumber(100 * fromCodec, 0)}% from the codec.`
    )
  }
  return lines
}
