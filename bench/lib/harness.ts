import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * What every benchmark shares: running a peer as a child process under GNU time (wall, user+system CPU,
 * peak RSS), medians, ratios, tables and the JSON file. Figures come from the run that prints them.
 */

export const TIME_BIN = '/usr/bin/time'

export interface ChildRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** From spawn to exit, by this process's clock (GNU time's own %e has 10 ms steps). */
  readonly wallSeconds: number
  /** user + system CPU of the child and its descendants, from GNU time. */
  readonly cpuSeconds: number
  readonly maxRssMb: number
  /** With `stdoutSpan`: seconds from the child's first stdout chunk to its last. */
  readonly stdoutSpanSeconds?: number
}

export interface ChildOptions {
  readonly timeoutMs?: number
  readonly env?: Record<string, string>
  /** Discard stdout (consumers printing every record). */
  readonly dropStdout?: boolean
  /** Discard stdout but time it: from the first chunk to the last (a consumer printing as it receives). */
  readonly stdoutSpan?: boolean
  readonly cwd?: string
  /** File fed to the child's stdin. */
  readonly stdinFile?: string
}

/** bin/squeeze-node: node with the V8 flags the `squeeze` command starts with (bin/node-flags.sh). */
const SQUEEZE_NODE = fileURLToPath(new URL('../../../bin/squeeze-node', import.meta.url))

/**
 * Runs a Node client script as runChild does, on this process's node with the flags the `squeeze` command starts
 * with, so a client measures squeeze as it runs. Every Node peer starts this way, so they share the flags too.
 */
export function runNodeClient(script: string, args: readonly string[], opts: ChildOptions = {}): Promise<ChildRun> {
  return runChild(SQUEEZE_NODE, [script, ...args], {
    ...opts,
    env: { SQUEEZE_NODE: process.execPath, ...(opts.env ?? {}) }
  })
}

/** Runs `cmd args…` under `/usr/bin/time -f '%e %U %S %M'`; never throws on a non-zero exit (the caller decides). */
export async function runChild(cmd: string, args: readonly string[], opts: ChildOptions = {}): Promise<ChildRun> {
  if (!existsSync(TIME_BIN)) throw new Error(`${TIME_BIN} is missing: apt-get install -y time (scripts/bench.sh does)`)
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-bench-time-'))
  const timeFile = join(dir, 'time.txt')
  const stdinFd = opts.stdinFile === undefined ? 'ignore' : openSync(opts.stdinFile, 'r')
  try {
    const spawnedAt = process.hrtime.bigint()
    const child = spawn(TIME_BIN, ['-f', '%e %U %S %M', '-o', timeFile, cmd, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...(opts.env ?? {}) },
      stdio: [stdinFd, opts.dropStdout === true ? 'ignore' : 'pipe', 'pipe']
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let firstChunkAt: bigint | undefined
    let lastChunkAt: bigint | undefined
    child.stdout?.on('data', (d: Buffer) => {
      if (opts.stdoutSpan === true) {
        lastChunkAt = process.hrtime.bigint()
        firstChunkAt ??= lastChunkAt
      } else {
        out.push(d)
      }
    })
    child.stderr?.on('data', (d: Buffer) => err.push(d))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000)
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject)
      child.on('close', (c) => resolve(c))
    })
    const wall = Number(process.hrtime.bigint() - spawnedAt) / 1e9
    clearTimeout(timer)
    const fields = readFileSync(timeFile, 'utf8').trim().split('\n').pop()?.split(' ').map(Number) ?? []
    const [, user = NaN, sys = NaN, rssKb = NaN] = fields
    return {
      code,
      stdout: Buffer.concat(out).toString('utf8'),
      stderr: Buffer.concat(err).toString('utf8'),
      wallSeconds: wall,
      cpuSeconds: user + sys,
      maxRssMb: rssKb / 1024,
      ...(firstChunkAt !== undefined && lastChunkAt !== undefined
        ? { stdoutSpanSeconds: Number(lastChunkAt - firstChunkAt) / 1e9 }
        : {})
    }
  } finally {
    if (typeof stdinFd === 'number') closeSync(stdinFd)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Lines of a failed child's stderr that its error, and its section's failure record, keep. */
export const STDERR_TAIL_LINES = 15

/** The last `lines` lines of `text`, without its trailing blank ones. */
export function tailLines(text: string, lines = STDERR_TAIL_LINES): string[] {
  const trimmed = text.trimEnd()
  return trimmed === '' ? [] : trimmed.split('\n').slice(-lines)
}

/** A child that exited non-zero: its message's first line says which and how, the tail what it last wrote to stderr. */
export class ChildFailed extends Error {
  readonly stderrTail: readonly string[]

  constructor(what: string, run: Pick<ChildRun, 'code' | 'stderr'>) {
    const tail = tailLines(run.stderr)
    super(`${what} exited ${run.code}; stderr tail:\n${tail.join('\n')}`)
    this.name = 'ChildFailed'
    this.stderrTail = tail
  }
}

export function must(run: ChildRun, what: string): ChildRun {
  if (run.code !== 0) throw new ChildFailed(what, run)
  return run
}

/** What a failed section's record on the page holds: the error's first line, and the failed child's stderr tail. */
export interface SectionFailure {
  readonly error: string
  readonly stderrTail: readonly string[]
}

/**
 * A section's error as its failure record: a child's error keeps its stderr tail; any other error's lines after
 * its first (a peer's own "stderr tail:" message) are kept in its place.
 */
export function sectionFailure(err: unknown): SectionFailure {
  const message = err instanceof Error ? err.message : String(err)
  const [error = '', ...rest] = message.split('\n')
  const stderrTail = err instanceof ChildFailed ? err.stderrTail : tailLines(rest.join('\n'))
  return { error: error.replace(/; stderr tail:$/, ''), stderrTail }
}

/** A failed section's body on the page: the error, then the stderr tail as a code block. */
export function sectionFailureBody(failure: SectionFailure): string {
  const head = `The section stopped with: ${failure.error}`
  if (failure.stderrTail.length === 0) return `${head}\n\nThe failed process wrote nothing to stderr.`
  // A fence inside the tail would end the block early.
  const tail = failure.stderrTail.map((line) => line.replaceAll('```', '` ` `'))
  return `${head}\n\nLast lines of its stderr:\n\n${'```'}\n${tail.join('\n')}\n${'```'}`
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b)
  if (finite.length === 0) return NaN
  const mid = Math.floor(finite.length / 2)
  return finite.length % 2 === 1 ? (finite[mid] as number) : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2
}

export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN
}

export function fmt(value: number | string | undefined, digits = 0): string {
  if (value === undefined) return '-'
  if (typeof value === 'string') return value
  if (!Number.isFinite(value)) return 'n/a'
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

export function fmtRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a'
}

/** A GitHub-flavoured markdown table, which reads fine in a terminal too. */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`
  return [line(headers), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n')
}

export function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`)
  return n
}

/**
 * The peers in the order they run in round `round`: rotated one place per round, so that no peer always meets the
 * broker first. Before it, squeeze always ran first, and in five lz4 benches in a row its slowest run was round 1's
 * on the corpus every time (399-516k records/s, against 746k-1.17M in later rounds).
 */
export function roundOrder<T>(peers: readonly T[], round: number): T[] {
  const at = peers.length === 0 ? 0 : round % peers.length
  return [...peers.slice(at), ...peers.slice(0, at)]
}

/** BENCH_RUNS (default 3): repetitions per configuration; the median is reported. */
export function benchRuns(): number {
  return envInt('BENCH_RUNS', 3)
}

export function gb(bytes: number): number {
  return bytes / 1e9
}

export function mb(bytes: number): number {
  return bytes / 1e6
}
