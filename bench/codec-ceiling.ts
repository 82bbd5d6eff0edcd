import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildBatches, sweepCodecs } from '../lib/sweep/codec-sweep.js'
import { formatCodecSpec, type CodecSpec } from '../lib/codecs/index.js'
import { benchRuns, fmt, median, table } from './lib/harness.js'
import type { InputKind } from './lib/inputs.js'

/**
 * The codec ceiling: the same record batches the producer would seal (batch.size of uncompressed bytes),
 * compressed by the codec library alone in this process (MB per CPU second), and by the `zstd -b` / `lz4 -b`
 * CLIs on a file of the same batches (their own benchmark mode, one thread). Every pipeline figure is also
 * reported as a fraction of these.
 */

export interface CeilingRow {
  readonly input: InputKind
  readonly target: string
  readonly batches: number
  readonly ratio: number
  /** In-process library, median of runs, MB of batch bytes per CPU second. */
  readonly libCompressMBps: number
  readonly libDecompressMBps: number
  readonly cliCompressMBps: number
  readonly cliDecompressMBps: number
  readonly cliRatio: number
}

export const TARGETS: readonly CodecSpec[] = [
  { codec: 'zstd', level: 3 },
  { codec: 'lz4', level: 1 }
]

export function codecCeiling(
  input: InputKind,
  values: readonly Buffer[],
  batchBytes: number,
  dir: string
): CeilingRow[] {
  const batches = buildBatches(
    values.map((value) => ({ key: null, value, timestamp: 0 })),
    batchBytes
  )
  const file = join(dir, `${input}-batches.bin`)
  writeFileSync(file, Buffer.concat(batches.sections))
  const runs = Math.max(3, benchRuns())
  return sweepCodecs(batches, TARGETS, { runs, minRunCpuSeconds: 0.3 }).map((lib, i) => {
    const spec = TARGETS[i] as CodecSpec
    const cli = cliBench(spec, file, batchBytes, runs)
    return {
      input,
      target: formatCodecSpec(spec),
      batches: batches.sections.length,
      ratio: lib.ratio,
      libCompressMBps: lib.compressMBPerSecond,
      libDecompressMBps: lib.decompressMBPerSecond,
      cliCompressMBps: cli.compress,
      cliDecompressMBps: cli.decompress,
      cliRatio: cli.ratio
    }
  })
}

/** `zstd -b3 -B<batch>` / `lz4 -b1`: the CLI's own benchmark (wall clock, one thread), median of runs. */
function cliBench(
  spec: CodecSpec,
  file: string,
  batchBytes: number,
  runs: number
): { compress: number; decompress: number; ratio: number } {
  const args =
    spec.codec === 'zstd'
      ? [`-b${spec.level ?? 3}`, '-i1', `-B${batchBytes}`, file]
      : [`-b${spec.level ?? 1}`, '-i1', file]
  const results = Array.from({ length: runs }, () => {
    // zstd prints its result on stdout, lz4 on stderr (with \r progress lines): read both.
    const r = spawnSync(spec.codec, args, { encoding: 'utf8' })
    if (r.error !== undefined) throw new Error(`${spec.codec} ${args.join(' ')}: ${r.error.message}`)
    const out = `${r.stdout}${r.stderr}`
    return parseCliBench(out)
  })
  return {
    compress: median(results.map((r) => r.compress)),
    decompress: median(results.map((r) => r.decompress)),
    ratio: median(results.map((r) => r.ratio))
  }
}

function parseCliBench(text: string): { compress: number; decompress: number; ratio: number } {
  const matches = [...text.matchAll(/\(x?\s*([\d.]+)\)\s*,\s*([\d.]+)\s*MB\/s\s*,\s*([\d.]+)\s*MB\/s/g)]
  const last = matches.at(-1)
  if (last === undefined) return { compress: NaN, decompress: NaN, ratio: NaN }
  return { ratio: Number(last[1]), compress: Number(last[2]), decompress: Number(last[3]) }
}

export function ceilingTable(rows: readonly CeilingRow[]): string {
  return table(
    [
      'input',
      'codec',
      'batches',
      'ratio',
      'lib compress MB/s/core',
      'lib decompress MB/s/core',
      'CLI compress MB/s',
      'CLI decompress MB/s',
      'CLI ratio',
      'lib / CLI compress'
    ],
    rows.map((r) => [
      r.input,
      r.target,
      fmt(r.batches),
      fmt(r.ratio, 2),
      fmt(r.libCompressMBps),
      fmt(r.libDecompressMBps),
      fmt(r.cliCompressMBps),
      fmt(r.cliDecompressMBps),
      fmt(r.cliRatio, 2),
      `${(r.libCompressMBps / r.cliCompressMBps).toFixed(2)}x`
    ])
  )
}

export function ceilingFor(rows: readonly CeilingRow[], input: InputKind, target: string): CeilingRow | undefined {
  return rows.find((r) => r.input === input && r.target === target)
}
