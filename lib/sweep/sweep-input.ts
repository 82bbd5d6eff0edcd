/** The records an in-memory codec sweep runs over: a log file parsed by its format, or seeded generated logs. */
import { ErrorCodes, SqueezeError } from '../errors.js'
import { buildBatches, type BatchSet } from './codec-sweep.js'
import { formatFor, type LogKind } from '../formats/index.js'
import { createGenerator } from '../generators/index.js'
import { DEFAULT_START_MS } from '../generators/log-generator.js'
import type { OutgoingRecord } from '../protocol/record.js'
import { readFileLines } from '../sources/file-source.js'

export interface SweepInput {
  readonly description: string
  readonly records: OutgoingRecord[]
  readonly linesNotParsed: number
}

/** What a sweep runs over, whatever the input: a description, and the records cut into batches at a batch.size. */
export interface SweepSource {
  readonly description: string
  readonly linesNotParsed: number
  batchesAt(batchBytes: number): BatchSet
}

/** A file's or the generator's records, cut at batch.size alone (one stream, no partitions, no linger). */
export function sweepSourceOf(input: SweepInput): SweepSource {
  return {
    description: input.description,
    linesNotParsed: input.linesNotParsed,
    batchesAt: (batchBytes) => buildBatches(input.records, batchBytes)
  }
}

/** A file's lines as records of `kind`, at most `maxLines`; lines that do not parse are counted and skipped. */
export async function readSweepInput(path: string, kind: LogKind, maxLines: number | undefined): Promise<SweepInput> {
  const format = formatFor(kind)
  const records: OutgoingRecord[] = []
  let lines = 0
  let linesNotParsed = 0
  for await (const item of readFileLines(path, { follow: false })) {
    if (item.kind !== 'line' || item.line === '') continue
    if (maxLines !== undefined && lines >= maxLines) break
    lines++
    try {
      // A steady 1 ms clock: the file's own times are inside the value, and batch deltas stay realistic and reproducible.
      records.push({ key: null, value: format.encodeLine(item.line), timestamp: DEFAULT_START_MS + records.length })
    } catch (err) {
      if (!(err instanceof SqueezeError && err.code === ErrorCodes.PARSE_LINE)) throw err
      linesNotParsed++
    }
  }
  return { description: `${path} (${kind}, ${lines} lines)`, records, linesNotParsed }
}

export function generateSweepInput(kind: LogKind, seed: number, count: number): SweepInput {
  const generator = createGenerator(kind, { seed })
  const records: OutgoingRecord[] = []
  for (let i = 0; i < count; i++) {
    const r = generator.next()
    records.push({ key: r.key, value: r.value, timestamp: r.timestampMs })
  }
  return { description: `generated ${kind} (seed ${seed})`, records, linesNotParsed: 0 }
}
