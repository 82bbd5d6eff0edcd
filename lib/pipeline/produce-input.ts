import { stat } from 'node:fs/promises'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { DETECT_LINES, readFirstLines, resolveKind, type KindChoice } from '../formats/detect-kind.js'
import { formatFor, type LogKind } from '../formats/index.js'
import type { Logger } from '../log/logger.js'
import { firstFile, type FilePattern } from '../sources/file-set.js'
import { readFileBatches, readFileChunks, readStdinBatches, requireFile } from '../sources/file-source.js'
import { isPattern } from '../sources/match-files.js'
import type { RateStep } from '../sources/rate-schedule.js'
import type { LineChunk, SourceBatch, SourceItem } from '../sources/source.js'
import { peekLines } from './peek-lines.js'

/** Where `squeeze produce` reads or makes its records, as its flags say. */
export interface ProduceInput {
  readonly source: 'generate' | 'file' | 'stdin'
  readonly kind: KindChoice
  /** The first --file: what a file source reads when it is not shipped as a file set. */
  readonly file: string | undefined
  readonly follow: boolean
  /** Followed files or a file set: shipped by shipFileSet, each pattern with its own kind. */
  readonly shipper: boolean
  readonly records: number | undefined
  readonly rate: RateStep[] | undefined
  readonly seed: number
  readonly lines: { readonly maxLineBytes: number; readonly onLineSplit: () => void; readonly signal: AbortSignal }
}

/** The input's kind, and for stdin read to detect it, the lines read so far and the stream from its start. */
export interface DetectedInput {
  readonly kind: LogKind
  readonly patterns: FilePattern[]
  readonly stdin: { readonly lines: string[]; readonly items: AsyncIterable<SourceItem> } | undefined
}

/**
 * A file's or stdin's kind, checked against (or, for auto, read from) its first lines before anything connects,
 * and a file set's patterns with theirs. Stdin is peeked only to detect its kind: with a kind given, a slow pipe's
 * first lines go out as they come.
 */
export async function detectInputKind(
  input: ProduceInput,
  patterns: readonly FilePattern[],
  log: Logger,
  exclude: readonly string[] = []
): Promise<DetectedInput> {
  const stdin =
    input.source === 'stdin' && input.kind === 'auto'
      ? await peekLines(eachItem(readStdinBatches(input.lines)), DETECT_LINES)
      : undefined
  const resolvedPatterns = await resolvePatternKinds(patterns, exclude, log)
  // Read once, a file set that matches no file would ship nothing and exit 0: a mistyped glob looks like success.
  // Followed, it waits for its files, as a shipper does.
  if (input.shipper && !input.follow && !(await anyFileMatches(patterns, exclude)))
    throw new SqueezeError(
      ErrorCodes.SOURCE,
      `no file matches ${patterns.map((p) => p.glob).join(', ')}: check the path, or add --follow to wait for files`
    )
  const file = input.file as string
  const sample = input.source === 'file' && !input.shipper ? await readFirstLines(file) : (stdin?.lines ?? [])
  const resolved =
    input.source === 'generate' || input.shipper
      ? { kind: (input.kind === 'auto' ? 'http' : input.kind) as LogKind, note: undefined }
      : resolveKind(input.kind, sample, input.source === 'file' ? file : 'stdin')
  if (resolved.note !== undefined) log.info({ kind: resolved.kind }, resolved.note)
  return { kind: resolved.kind, patterns: resolvedPatterns, stdin }
}

/** The size of a file read once, which says how much is coming; undefined for any other input or an unreadable file. */
export async function inputBytes(input: ProduceInput): Promise<number | undefined> {
  if (input.source !== 'file' || input.shipper) return undefined
  return stat(input.file as string).then(
    (s) => s.size,
    () => undefined
  )
}

/** The records of a generated run, a file read once or stdin (not a file set: see shipFileSet). */
export async function recordSource(
  input: ProduceInput,
  detected: DetectedInput
): Promise<AsyncIterable<SourceBatch | LineChunk>> {
  const { kind, stdin } = detected
  const { records, lines } = input
  // The generators load only for a generated run (a tenth of the modules a file run needs).
  if (input.source === 'generate') {
    return (await import('../sources/generator-source.js')).generateRecordBatches({
      kind,
      seed: input.seed,
      signal: lines.signal,
      ...(records === undefined ? {} : { records }),
      ...(input.rate === undefined ? {} : { rateSchedule: input.rate })
    })
  }
  if (input.source === 'stdin')
    return limit(stdin === undefined ? readStdinBatches(lines) : oneByOne(stdin.items), records)
  const file = input.file as string
  // Every format reads a line's bytes in place: it gets the file as read, undecoded and unsplit.
  if (!input.follow && records === undefined) return readFileChunks(file, lines)
  // A line's bytes serve a format whose record is the line itself (checkLine), not one that encodes it.
  const lineBytes = formatFor(kind).checkLine !== undefined
  return limit(readFileBatches(file, { ...lines, follow: input.follow, lineBytes }), records)
}

/**
 * A file set's patterns with `auto` (no --kind, no KIND: prefix) replaced by the kind of the first file the pattern
 * matches now, detected from its first lines. The file set's id keeps `auto`, so it does not change with the data.
 */
async function resolvePatternKinds(
  patterns: readonly FilePattern[],
  exclude: readonly string[],
  log: Logger
): Promise<FilePattern[]> {
  return Promise.all(
    patterns.map(async (p) => {
      if (p.kind !== 'auto') return p
      const first = await firstFile(p.glob, exclude)
      if (first === undefined) {
        // A path naming one file: why it cannot be read (missing, refused, a directory).
        if (!isPattern(p.glob)) await requireFile(p.glob)
        throw new SqueezeError(
          ErrorCodes.SOURCE,
          `--kind auto: no file matches ${p.glob} yet to read its kind from; give --kind (or KIND:${p.glob})`
        )
      }
      const resolved = resolveKind('auto', await readFirstLines(first), first)
      if (resolved.note !== undefined) log.info({ kind: resolved.kind, glob: p.glob }, resolved.note)
      return { ...p, kind: resolved.kind }
    })
  )
}

/** Whether any pattern matches a file the file set would read now. */
async function anyFileMatches(patterns: readonly FilePattern[], exclude: readonly string[]): Promise<boolean> {
  for (const p of patterns) if ((await firstFile(p.glob, exclude)) !== undefined) return true
  return false
}

async function* eachItem(batches: AsyncIterable<SourceBatch>): AsyncGenerator<SourceItem> {
  for await (const batch of batches) yield* batch
}

async function* oneByOne(items: AsyncIterable<SourceItem>): AsyncGenerator<SourceBatch> {
  for await (const item of items) yield [item]
}

/** The first `max` items of the batches. */
async function* limit(batches: AsyncIterable<SourceBatch>, max: number | undefined): AsyncGenerator<SourceBatch> {
  if (max === undefined) {
    yield* batches
    return
  }
  let n = 0
  for await (const batch of batches) {
    yield batch.length <= max - n ? batch : batch.slice(0, max - n)
    n += batch.length
    if (n >= max) return
  }
}
