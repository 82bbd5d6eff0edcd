import { open } from 'node:fs/promises'
import { ErrorCodes, SqueezeError, unreadableFile } from '../errors.js'
import { compressedFileError, compressedFormat } from './compressed-file.js'
import { formatFor, LOG_KINDS } from './index.js'
import type { LogKind } from './log-format.js'

/** What each kind's lines are, in the words an operator knows them by. */
export const KIND_NAMES: Readonly<Record<LogKind, string>> = {
  http: 'combined log format',
  journald: 'journalctl -o json',
  'nginx-error': 'nginx error log',
  'dns-dnsmasq': 'dnsmasq query log',
  'dns-zeek': 'Zeek dns.log',
  syslog: 'RFC 3164/5424 syslog'
}

/** `--kind` also takes `auto`: the kind is detected from the input's first lines. */
export type KindChoice = LogKind | 'auto'
export const KIND_CHOICES: readonly KindChoice[] = Object.freeze(['auto', ...LOG_KINDS])

/** Lines read to detect a kind: enough to outvote a few odd lines, few enough to cost nothing. */
export const DETECT_LINES = 200
const DETECT_BYTES = 1024 * 1024

export interface KindScore {
  readonly kind: LogKind
  /** Lines of the sample that parse as `kind`. */
  readonly parsed: number
  readonly lines: number
}

function parses(kind: LogKind, line: string): boolean {
  const format = formatFor(kind)
  try {
    if (format.checkLine !== undefined) format.checkLine(line)
    else format.encodeLine(line)
    return true
  } catch (err) {
    if (err instanceof SqueezeError) return false
    throw err
  }
}

/**
 * How many of `lines` each kind parses, best first. Ties keep LOG_KINDS order, which puts the narrower kind first:
 * a dnsmasq line is also a syslog line.
 */
export function scoreKinds(lines: readonly string[]): KindScore[] {
  const sample = lines.filter((line) => line.trim() !== '')
  return LOG_KINDS.map((kind) => ({
    kind,
    parsed: sample.filter((line) => parses(kind, line)).length,
    lines: sample.length
  })).sort((a, b) => b.parsed - a.parsed)
}

/** The kind most of the lines parse as, or undefined when no kind parses half of them. */
export function likelyKind(lines: readonly string[]): KindScore | undefined {
  const best = scoreKinds(lines)[0]
  return best !== undefined && best.lines > 0 && best.parsed * 2 >= best.lines ? best : undefined
}

/** "0 of 25,567 lines parse as http (combined log format)"; `first`: "0 of the first 200 lines ...". */
export function parseSummary(kind: LogKind, parsed: number, lines: number, first = false): string {
  return (
    `${parsed.toLocaleString('en-US')} of ${first ? 'the first ' : ''}${lines.toLocaleString('en-US')} ` +
    `line${lines === 1 ? '' : 's'} parse${lines === 1 && !first ? 's' : ''} as ${kind} (${KIND_NAMES[kind]})`
  )
}

/** The error for an input that gave no records (or almost none) as `kind`: its parse summary and what it looks like. */
export function wrongKindError(
  kind: LogKind,
  parsed: number,
  lines: number,
  sample: readonly string[],
  first = false
): SqueezeError {
  const guess = likelyKind(sample)
  const hint =
    guess === undefined || guess.kind === kind
      ? `no kind squeeze knows (${LOG_KINDS.join(', ')}) parses them`
      : `they look like ${guess.kind} (${guess.parsed} of the first ${guess.lines} parse): try --kind ${guess.kind}`
  return new SqueezeError(ErrorCodes.SOURCE, `${parseSummary(kind, parsed, lines, first)}; ${hint}`)
}

/** The first lines of a file (at most DETECT_LINES, from its first MiB), for detection and hints. */
export async function readFirstLines(path: string): Promise<string[]> {
  const file = await open(path, 'r').catch((err: unknown) => {
    throw unreadableFile(path, err)
  })
  try {
    const buffer = Buffer.alloc(DETECT_BYTES)
    const { bytesRead } = await file.read(buffer, 0, DETECT_BYTES, 0).catch((err: unknown) => {
      throw unreadableFile(path, err)
    })
    const compressed = compressedFormat(buffer.subarray(0, bytesRead))
    if (compressed !== null) throw compressedFileError(path, compressed)
    const lines = buffer.toString('utf8', 0, bytesRead).split('\n')
    // The last piece may be a line cut by the read; it is kept only when the whole file was read.
    if (bytesRead === DETECT_BYTES) lines.pop()
    return lines
      .map((line) => line.replace(/\r$/, ''))
      .filter((line) => line.trim() !== '')
      .slice(0, DETECT_LINES)
  } finally {
    await file.close()
  }
}

/**
 * The kind to read `sample` (an input's first lines) as: `choice` itself, checked, or the detected one for `auto`.
 * A given kind that parses under a tenth of the sample is an error, naming the kind the lines look like if any.
 */
export function resolveKind(
  choice: KindChoice,
  sample: readonly string[],
  source: string
): { kind: LogKind; note?: string } {
  if (choice !== 'auto') {
    const parsed = sample.filter((line) => parses(choice, line)).length
    if (sample.length > 0 && parsed * 10 < sample.length)
      throw wrongKindError(choice, parsed, sample.length, sample, true)
    return { kind: choice }
  }
  const guess = likelyKind(sample)
  if (guess === undefined) {
    const best = scoreKinds(sample)[0]
    const detail =
      best === undefined || best.lines === 0
        ? 'it has no lines'
        : `at best ${parseSummary(best.kind, best.parsed, best.lines)}`
    throw new SqueezeError(
      ErrorCodes.SOURCE,
      `--kind auto: ${source} is not a log kind squeeze knows (${detail}); give --kind`
    )
  }
  return {
    kind: guess.kind,
    note: `--kind auto: ${source} reads as ${guess.kind} (${guess.parsed} of the first ${guess.lines} lines parse)`
  }
}
