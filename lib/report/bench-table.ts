import type { SweepSource } from '../sweep/sweep-input.js'
import type { BatchSizeResult, LevelResult } from '../sweep/codec-sweep.js'
import { formatBytes, formatNumber, formatRatio } from './table.js'
import { fitTable, WIDE, wrapLines, type TerminalLayout } from './terminal.js'

export interface BenchSettings {
  /** Records in the batches swept. */
  readonly records: number
  readonly batches: number
  readonly batchBytes: number
  readonly runs: number
}

/** `squeeze bench`'s report: a heading, the per-level table and the ratio-by-batch-size table. */
export function renderBench(
  input: Pick<SweepSource, 'description' | 'linesNotParsed'>,
  settings: BenchSettings,
  levels: readonly LevelResult[],
  sizes: readonly BatchSizeResult[],
  layout: TerminalLayout = WIDE
): string {
  const { records, batches, batchBytes, runs } = settings
  const first = levels[0]
  const uncompressed = first === undefined ? 0 : first.uncompressedBytes
  const heading =
    `${input.description}: ${records} records` +
    (input.linesNotParsed > 0
      ? ` (${input.linesNotParsed} line${input.linesNotParsed === 1 ? '' : 's'} not parsed, skipped)`
      : '') +
    `, ${batches} batches of <= ${formatBytes(batchBytes)}, ${formatBytes(uncompressed)} uncompressed; median of ${runs} run${runs === 1 ? '' : 's'}, MB/s per core of CPU time`
  const levelTable = fitTable(
    ['codec', 'compressed', 'ratio', 'compress MB/s', 'decompress MB/s'],
    levels.map((l) => [
      l.target,
      formatBytes(l.compressedBytes),
      formatRatio(l.ratio, 3),
      formatNumber(l.compressMBPerSecond, 1),
      formatNumber(l.decompressMBPerSecond, 1)
    ]),
    layout,
    [1]
  )
  const targets = Object.keys(sizes[0]?.ratios ?? {})
  const sizeTable = fitTable(
    ['batch size', 'batches', 'rec/batch', ...targets.map((t) => `${t} ratio`)],
    sizes.map((s) => [
      formatBytes(s.batchBytes),
      String(s.batches),
      formatNumber(s.meanRecordsPerBatch, 0),
      ...targets.map((t) => formatRatio(s.ratios[t] ?? Number.NaN, 3))
    ]),
    layout,
    [1, 2]
  )
  return wrapLines([heading, '', levelTable, '', 'ratio by batch size (batch.size):', '', sizeTable].join('\n'), layout)
}
