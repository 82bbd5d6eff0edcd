import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createGenerator } from '../../lib/generators/index.js'

/**
 * The two inputs every peer gets, as files each tool can read:
 *  - `corpus`: the lines of a real Apache access log (test/fixtures/corpus), replayed in order until N records;
 *  - `http`: generated Cap'n Proto HTTP request logs (binary values, seed 1).
 * Each input is written once per size as a length-prefixed file (Node peers) and a delimited file
 * (kcat -l -D; ProducerPerformance --payload-file for the text corpus only).
 */

export type InputKind = 'corpus' | 'http'

export interface InputFiles {
  readonly kind: InputKind
  readonly records: number
  /** Sum of value bytes: the "uncompressed input" every MB/s and ratio is measured against. */
  readonly valueBytes: number
  /** u32be length + value, repeated. */
  readonly lengthPrefixed: string
  /** Values separated by `delimiter`, which occurs in no value. */
  readonly delimited: string
  /** The delimited records twice over (2 x records), for kcat's marginal rate. */
  readonly delimitedTwice: string
  /** kcat's -D notation of the delimiter (`\n`, or `\xNN` bytes). */
  readonly kcatDelimiter: string
  /** True when ProducerPerformance can replay the file unchanged (it reads it as UTF-8 text). */
  readonly javaReplayable: boolean
}

/** The sections of bench/run.ts that read each input; the others (parse, decode, keeping-up, e2e) make their own. */
const SECTIONS_READING: Readonly<Record<InputKind, readonly string[]>> = {
  corpus: ['ceiling', 'producer', 'levels', 'lz4'],
  http: ['ceiling', 'producer', 'levels', 'lz4', 'consumer', 'copier']
}

/** The inputs the wanted sections read, so a run of parse or e2e alone writes no file it never opens. */
export function inputsFor(sections: ReadonlySet<string>): InputKind[] {
  return (['corpus', 'http'] as const).filter((kind) => SECTIONS_READING[kind].some((s) => sections.has(s)))
}

export const CORPUS_FILE =
  process.env['BENCH_CORPUS'] ??
  new URL('../../../test/fixtures/corpus/access_apache_semicomplete_2015.log', import.meta.url).pathname

// No NUL byte: kcat reads -D as a C string.
const BINARY_DELIMITER = Buffer.from([0xfe, 0xff, 0x53, 0x51, 0x5a, 0x21, 0xff, 0xfe])

export function corpusValues(records: number, file: string = CORPUS_FILE): Buffer[] {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => Buffer.from(l, 'utf8'))
  if (lines.length === 0) throw new Error(`${file} has no lines`)
  return Array.from({ length: records }, (_, i) => lines[i % lines.length] as Buffer)
}

export function httpValues(records: number, seed = 1): Buffer[] {
  const gen = createGenerator('http', { seed })
  return Array.from({ length: records }, () => gen.next().value)
}

export function writeInputs(dir: string, kind: InputKind, records: number): InputFiles {
  mkdirSync(dir, { recursive: true })
  const values = kind === 'corpus' ? corpusValues(records) : httpValues(records)
  const delimiter = kind === 'corpus' ? Buffer.from('\n') : BINARY_DELIMITER
  for (const v of values)
    if (v.indexOf(delimiter) >= 0) throw new Error(`a ${kind} value contains the delimiter; pick another`)
  const valueBytes = values.reduce((sum, v) => sum + v.length, 0)
  const lengthPrefixed = join(dir, `${kind}-${records}.lp`)
  const delimited = join(dir, `${kind}-${records}.txt`)
  const lp = Buffer.allocUnsafe(valueBytes + 4 * values.length)
  let at = 0
  for (const v of values) {
    lp.writeUInt32BE(v.length, at)
    v.copy(lp, at + 4)
    at += 4 + v.length
  }
  writeFileSync(lengthPrefixed, lp)
  const parts: Buffer[] = []
  values.forEach((v, i) => {
    if (i > 0) parts.push(delimiter)
    parts.push(v)
  })
  if (kind === 'corpus') parts.push(delimiter)
  const delimitedBytes = Buffer.concat(parts)
  writeFileSync(delimited, delimitedBytes)
  // The same records twice, for kcat's marginal rate: (time for 2N) - (time for N) leaves out start-up and the final flush.
  const delimitedTwice = join(dir, `${kind}-${records}-twice.txt`)
  writeFileSync(
    delimitedTwice,
    Buffer.concat(kind === 'corpus' ? [delimitedBytes, delimitedBytes] : [delimitedBytes, delimiter, delimitedBytes])
  )
  const kcatDelimiter =
    kind === 'corpus' ? '\\n' : [...delimiter].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('')
  return {
    kind,
    records,
    valueBytes,
    lengthPrefixed,
    delimited,
    delimitedTwice,
    kcatDelimiter,
    javaReplayable: kind === 'corpus'
  }
}

/** Reads a length-prefixed file back into values (views into one buffer). */
export function readLengthPrefixed(file: string): Buffer[] {
  const all = readFileSync(file)
  const values: Buffer[] = []
  let at = 0
  while (at < all.length) {
    const len = all.readUInt32BE(at)
    values.push(all.subarray(at + 4, at + 4 + len))
    at += 4 + len
  }
  return values
}
