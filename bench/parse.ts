import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { formatFor, type LogKind } from '../lib/formats/index.js'
import type { WrittenValueSink } from '../lib/formats/log-format.js'
import { createGenerator } from '../lib/generators/index.js'
import type { ValueWriter } from '../lib/protocol/record-batch-builder.js'
import { CORPUS_FIXTURES, corpusLines } from '../test/helpers/corpus.js'

/**
 * Lines/s of each format's encodeLine on its corpus file (parse, and for http the Cap'n Proto encode), one core
 * (lines per CPU second of this process), best of 5 passes after a warm-up pass; and the generator's records/s. Lines a format rejects count as read
 * (they were parsed too). Run: npm run build && node dist/bench/parse.js [out.json]. A benchmark, not a test.
 */
/** The first corpus file of each kind. */
export const FIXTURES = CORPUS_FIXTURES.filter((fixture, i) => CORPUS_FIXTURES.findIndex((f) => f.kind === fixture.kind) === i)
/** Lines per timed pass: small files are replayed so every pass runs long enough to time. */
const PASS_LINES = 100_000

/** CPU seconds of this process since `from` (process.cpuUsage()): on a shared machine, wall time measures the neighbours. */
function cpuSecondsSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from)
  return (used.user + used.system) / 1e6
}

export function linesPerSecond(kind: LogKind, file: string): number {
  const lines = corpusLines(file)
  const format = formatFor(kind)
  let best = 0
  for (let pass = 0; pass < 6; pass++) {
    let bytes = 0
    const t0 = process.cpuUsage()
    for (let i = 0; i < PASS_LINES; i++) {
      try {
        bytes += format.encodeLine(lines[i % lines.length] as string).length
      } catch {
        bytes++
      }
    }
    const seconds = cpuSecondsSince(t0)
    assert.ok(bytes > 0)
    if (pass > 0) best = Math.max(best, PASS_LINES / seconds)
  }
  return Math.round(best)
}

/**
 * Lines/s of a format's writeLineBytes (the line read in place from its bytes and written into a batch, what
 * `produce --source file` runs), on the corpus file's bytes replayed to a pass, into a reused buffer; best of 5
 * passes after a warm-up, like linesPerSecond. Undefined for a format without it.
 */
export function inPlaceLinesPerSecond(kind: LogKind, file: string): number | undefined {
  const format = formatFor(kind)
  const write = format.writeLineBytes
  if (write === undefined) return undefined
  const lines = corpusLines(file)
  const bytes = Buffer.from(`${Array.from({ length: PASS_LINES }, (_, i) => lines[i % lines.length] as string).join('\n')}\n`)
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
  let best = 0
  for (let pass = 0; pass < 6; pass++) {
    let written = 0
    const t0 = process.cpuUsage()
    for (let start = 0; start < bytes.length;) {
      const end = bytes.indexOf(0x0a, start)
      try {
        write.call(format, bytes, start, end, sink)
        written++
      } catch {
        // a line the format rejects still counts as read, as in linesPerSecond
      }
      start = end + 1
    }
    const seconds = cpuSecondsSince(t0)
    assert.ok(written > 0)
    if (pass > 0) best = Math.max(best, PASS_LINES / seconds)
  }
  return Math.round(best)
}

export function generatorRecordsPerSecond(kind: LogKind): number {
  const gen = createGenerator(kind, { seed: 1 })
  let best = 0
  for (let pass = 0; pass < 6; pass++) {
    let bytes = 0
    const t0 = process.cpuUsage()
    for (let i = 0; i < PASS_LINES; i++) bytes += gen.next().value.length
    const seconds = cpuSecondsSince(t0)
    assert.ok(bytes > 0)
    if (pass > 0) best = Math.max(best, PASS_LINES / seconds)
  }
  return Math.round(best)
}

function main(): void {
  const parse = Object.fromEntries(FIXTURES.map(({ kind, file }) => [kind, linesPerSecond(kind, file)]))
  const inPlace = Object.fromEntries(FIXTURES.flatMap(({ kind, file }) => {
    const rate = inPlaceLinesPerSecond(kind, file)
    return rate === undefined ? [] : [[kind, rate]]
  }))
  const generator = { http: generatorRecordsPerSecond('http') }
  console.log('encodeLine on the corpus files, lines per CPU second (best of 5 passes):')
  console.table(parse)
  console.log('writeLineBytes (read in place), lines per CPU second:')
  console.table(inPlace)
  console.log('generator records per CPU second:')
  console.table(generator)
  writeFileSync(process.argv[2] ?? 'bench-parse.json', JSON.stringify({ linesPerSecond: parse, inPlaceLinesPerSecond: inPlace, generatorRecordsPerSecond: generator }, null, 2))
}

if (import.meta.url === `file://${process.argv[1]}`) main()
