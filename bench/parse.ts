import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { formatFor, type LogKind } from '../lib/formats/index.js'
import type { WrittenValueSink } from '../lib/formats/log-format.js'
import { createGenerator } from '../lib/generators/index.js'
import { linePassFor } from '../lib/pipeline/produce-logs.js'
import { READ_ONCE_BYTES } from '../lib/sources/line-chunks.js'
import type { ValueWriter } from '../lib/protocol/record-batch-builder.js'
import { CORPUS_FIXTURES, corpusLines } from '../test/helpers/corpus.js'

/**
 * Lines/s of each format's encodeLine on its corpus file (parse, and for http the Cap'n Proto encode), one core
 * (lines per CPU second of this process), best of 5 passes after a warm-up pass; and the generator's records/s. Lines a format rejects count as read
 * (they were parsed too). Run: npm run build && node dist/bench/parse.js [out.json]. A benchmark, not a test.
 */
/** The first corpus file of each kind. */
export const FIXTURES = CORPUS_FIXTURES.filter(
  (fixture, i) => CORPUS_FIXTURES.findIndex((f) => f.kind === fixture.kind) === i
)
/** Lines per timed pass: small files are replayed so every pass runs long enough to time. */
const PASS_LINES = 100_000

/** CPU seconds of this process since `from` (process.cpuUsage()): on a shared machine, wall time measures the neighbours. */
function cpuSecondsSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from)
  return (used.user + used.system) / 1e6
}

/**
 * PASS_LINES items per pass, per CPU second: the best of 5 passes after a warm-up pass. `pass` does one pass and
 * returns what it produced (bytes or records), which must be more than nothing.
 */
function bestOfPasses(pass: () => number): number {
  let best = 0
  for (let i = 0; i < 6; i++) {
    const t0 = process.cpuUsage()
    const produced = pass()
    const seconds = cpuSecondsSince(t0)
    assert.ok(produced > 0)
    if (i > 0) best = Math.max(best, PASS_LINES / seconds)
  }
  return Math.round(best)
}

export function linesPerSecond(kind: LogKind, file: string): number {
  const lines = corpusLines(file)
  const format = formatFor(kind)
  return bestOfPasses(() => {
    let bytes = 0
    for (let i = 0; i < PASS_LINES; i++) {
      try {
        bytes += format.encodeLine(lines[i % lines.length] as string).length
      } catch {
        bytes++
      }
    }
    return bytes
  })
}

/**
 * Lines/s of a format's lines read in place from their bytes and written into a batch, as `produce --source file`
 * runs them (writeLineChunk): READ_ONCE_BYTES chunks, each through the pass writeLineChunk uses (linePassFor), and
 * each line the pass leaves through writeLineBytes. On the corpus file's bytes replayed to a pass, into a reused
 * buffer; best of 5 passes after a warm-up, like linesPerSecond.
 */
export function inPlaceLinesPerSecond(kind: LogKind, file: string): number {
  const format = formatFor(kind)
  const write = format.writeLineBytes
  const lines = corpusLines(file)
  const bytes = Buffer.from(
    `${Array.from({ length: PASS_LINES }, (_, i) => lines[i % lines.length] as string).join('\n')}\n`
  )
  const out = Buffer.allocUnsafe(1024 * 1024)
  const view = new DataView(out.buffer, out.byteOffset, out.length)
  let at = 0
  const sink: WrittenValueSink = {
    put<T>(maxValueBytes: number, writeValue: ValueWriter<T>, arg: T): undefined {
      if (at + maxValueBytes > out.length) at = 0
      at = writeValue(out, view, at, arg)
      return undefined
    }
  }
  const pass = linePassFor(format)
  const writeLine = (start: number, end: number): number => {
    try {
      write.call(format, bytes, start, end, sink)
      return 1
    } catch {
      // a line the format rejects still counts as read, as in linesPerSecond
      return 0
    }
  }
  const writeChunk = (from: number, end: number): number => {
    let written = 0
    for (let start = from; start <= end; start = pass.next) {
      pass.read(bytes, start, end)
      for (let i = 0; i < pass.count; i++)
        if (pass.taken(i)) {
          pass.put(i, sink)
          written++
        } else written += writeLine(pass.start(i), pass.end(i))
    }
    return written
  }
  return bestOfPasses(() => {
    let written = 0
    // Chunks as readFileChunks cuts them: after the last newline of each read.
    for (let from = 0; from < bytes.length;) {
      const end = bytes.lastIndexOf(0x0a, Math.min(from + READ_ONCE_BYTES, bytes.length) - 1)
      written += writeChunk(from, end)
      from = end + 1
    }
    return written
  })
}

export function generatorRecordsPerSecond(kind: LogKind): number {
  const gen = createGenerator(kind, { seed: 1 })
  return bestOfPasses(() => {
    let bytes = 0
    for (let i = 0; i < PASS_LINES; i++) bytes += gen.next().value.length
    return bytes
  })
}

/** The parse figures: lines per CPU second of each format's encodeLine (and read in place), and the http generator's records. */
export interface ParseRates {
  readonly linesPerSecond: Readonly<Record<string, number>>
  /** Lines read in place from their bytes, where a format can (what produce --source file runs). */
  readonly inPlaceLinesPerSecond: Readonly<Record<string, number>>
  readonly generatorRecordsPerSecond: number
}

export function parseRates(): ParseRates {
  return {
    linesPerSecond: Object.fromEntries(FIXTURES.map(({ kind, file }) => [kind, linesPerSecond(kind, file)])),
    inPlaceLinesPerSecond: Object.fromEntries(
      FIXTURES.map(({ kind, file }) => [kind, inPlaceLinesPerSecond(kind, file)])
    ),
    generatorRecordsPerSecond: generatorRecordsPerSecond('http')
  }
}

function main(): void {
  const rates = parseRates()
  console.log('encodeLine on the corpus files, lines per CPU second (best of 5 passes):')
  console.table(rates.linesPerSecond)
  console.log('lines read in place, lines per CPU second:')
  console.table(rates.inPlaceLinesPerSecond)
  console.log('generator records per CPU second:')
  console.table({ http: rates.generatorRecordsPerSecond })
  writeFileSync(process.argv[2] ?? 'bench-parse.json', JSON.stringify(rates, null, 2))
}

if (import.meta.url === `file://${process.argv[1]}`) main()
