import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { benchRuns, fmt, gb, mb, median, must, runNodeClient, table } from './lib/harness.js'
import type { BenchKafka } from './lib/kafka-env.js'

/**
 * Copier benchmark: squeeze's copier (consumer group on the source, one producer writing every target with its
 * own codec) mirrors one source topic into six targets until the end offsets seen at start, once per batching
 * mode (source batches transcoded, then records re-batched), alternately, so both figures come from one run on
 * one broker. Sustained source MB/s and CPU are measured in-process from the first source record to the last
 * target acknowledgement; peak RSS by GNU time. No peer: no other tool in this run writes one source into
 * several codecs.
 */

export const COPY_TARGETS = ['none', 'snappy', 'lz4', 'zstd:1', 'zstd:3', 'zstd:6']

export interface CopierRow {
  /**
   * 'source batching', 'rebatch' (the copier's default compression threads) or 'source batching, inline
   * compression' (none; this build), or 'baseline' for BENCH_COPIER_BASELINE's.
   */
  readonly build: string
  readonly runs: number
  readonly targets: number
  readonly sourceRecords: number
  readonly sourceMbPerSecond: number
  /** Each run's figure, in run order (the median's spread). */
  readonly sourceMbPerSecondRuns: readonly number[]
  readonly recordsPerSecond: number
  readonly cpuSecondsPerGbPerTarget: number
  readonly compressShareOfCpu: number
  /** The source batches' decompression, once per batch, as a share of the copier's CPU. */
  readonly decompressShareOfCpu: number
  readonly maxRssMb: number
  /** The broker's CPU over the same span, per source GB (NaN when this run did not start the broker). */
  readonly brokerCpuSecondsPerGb: number
  /** Copier plus broker CPU seconds per second of the copy: near the machine's cores, the copy is CPU-bound. */
  readonly coresBusy: number
}

const CLIENT = fileURLToPath(new URL('./copier-client.js', import.meta.url))

/**
 * BENCH_COPIER_BASELINE: another build's dist/bench/copier-client.js (the commit before a change, built in a second
 * worktree). It copies the same source alternately with this build, each going first every other run, so a
 * before/after comes from one run on one broker rather than from two runs under different load.
 */
const BASELINE = process.env.BENCH_COPIER_BASELINE

interface CopierSample {
  mbps: number
  rps: number
  cpuPerGbPerTarget: number
  compressShare: number
  decompressShare: number
  rss: number
  records: number
  brokerCpuPerGb: number
  coresBusy: number
}

async function copyOnce(
  client: string,
  args: readonly string[],
  kafka: BenchKafka,
  source: string,
  prefix: string
): Promise<CopierSample & { cpuSeconds: number }> {
  const r = must(
    await runNodeClient(
      client,
      ['--brokers', kafka.brokers, '--topic', source, '--targets', COPY_TARGETS.join(','), '--prefix', prefix, ...args],
      { timeoutMs: 180_000 }
    ),
    'copier'
  )
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
    sourceRecords: number
    sourceBytes: number
    seconds: number
    cpuSeconds: number
    compressCpuSeconds: number
    decompressCpuSeconds?: number
    brokerCpuSeconds?: number
    recordsFailed: number
  }
  if (out.recordsFailed > 0) throw new Error(`copier: ${out.recordsFailed} records undelivered`)
  return {
    mbps: mb(out.sourceBytes) / out.seconds,
    rps: out.sourceRecords / out.seconds,
    cpuPerGbPerTarget: out.cpuSeconds / gb(out.sourceBytes) / COPY_TARGETS.length,
    compressShare: out.compressCpuSeconds / out.cpuSeconds,
    decompressShare: (out.decompressCpuSeconds ?? NaN) / out.cpuSeconds,
    rss: r.maxRssMb,
    records: out.sourceRecords,
    cpuSeconds: out.cpuSeconds,
    brokerCpuPerGb: (out.brokerCpuSeconds ?? NaN) / gb(out.sourceBytes),
    coresBusy: (out.cpuSeconds + (out.brokerCpuSeconds ?? NaN)) / out.seconds
  }
}

/** This build's rows (source batching first, then rebatch, then source batching compressing inline), then the baseline's. */
export async function copierBench(kafka: BenchKafka, source: string, log: (s: string) => void): Promise<CopierRow[]> {
  const runs = benchRuns()
  // The broker's CPU over each copy, when this run started the broker (a baseline build's client has no such flag).
  const brokerPid = kafka.pid === undefined ? [] : ['--broker-pid', String(kafka.pid)]
  const builds = [
    { build: 'source batching', client: CLIENT, args: ['--batching', 'source', ...brokerPid] },
    { build: 'rebatch', client: CLIENT, args: ['--batching', 'rebatch', ...brokerPid] },
    // What the copier's compression thread gains: the same copy with every batch compressed on the event loop.
    {
      build: 'source batching, inline compression',
      client: CLIENT,
      args: ['--batching', 'source', '--compression-threads', '0', ...brokerPid]
    },
    ...(BASELINE === undefined || BASELINE === '' ? [] : [{ build: 'baseline', client: BASELINE, args: [] }])
  ]
  const samples = new Map<string, CopierSample[]>(builds.map((b) => [b.build, []]))
  for (let run = 0; run < runs; run++) {
    for (const { build, client, args } of run % 2 === 0 ? builds : [...builds].reverse()) {
      const s = await copyOnce(
        client,
        args,
        kafka,
        source,
        `bench-copy-${run}-${build.replace(/[^a-z0-9]+/g, '-')}-${Date.now()}`
      )
      samples.get(build)?.push(s)
      log(
        `copier run ${run + 1}/${runs}${builds.length > 1 ? ` (${build})` : ''}: ${s.mbps.toFixed(1)} source MB/s, ${s.cpuSeconds.toFixed(2)} s CPU, ${s.rss.toFixed(0)} MB RSS`
      )
    }
  }
  return builds.map(({ build }) => {
    const list = samples.get(build) ?? []
    return {
      build,
      runs,
      targets: COPY_TARGETS.length,
      sourceRecords: list[0]?.records ?? 0,
      sourceMbPerSecond: median(list.map((s) => s.mbps)),
      sourceMbPerSecondRuns: list.map((s) => s.mbps),
      recordsPerSecond: median(list.map((s) => s.rps)),
      cpuSecondsPerGbPerTarget: median(list.map((s) => s.cpuPerGbPerTarget)),
      compressShareOfCpu: median(list.map((s) => s.compressShare)),
      decompressShareOfCpu: median(list.map((s) => s.decompressShare)),
      maxRssMb: Math.max(...list.map((s) => s.rss)),
      brokerCpuSecondsPerGb: median(list.map((s) => s.brokerCpuPerGb)),
      coresBusy: median(list.map((s) => s.coresBusy))
    }
  })
}

export function copierTable(rows: readonly CopierRow[]): string {
  const body = table(
    [
      'batching',
      'targets',
      'source records',
      'source MB/s (sustained)',
      'runs (MB/s)',
      'source records/s',
      'CPU s per GB per target',
      'compress share of CPU',
      'decompress share of CPU',
      'broker CPU s per source GB',
      'cores busy (copier + broker)',
      'peak RSS MB'
    ],
    rows.map((row) => [
      row.build,
      COPY_TARGETS.join(','),
      fmt(row.sourceRecords),
      fmt(row.sourceMbPerSecond, 1),
      row.sourceMbPerSecondRuns.map((v) => v.toFixed(1)).join(', '),
      fmt(row.recordsPerSecond),
      fmt(row.cpuSecondsPerGbPerTarget, 1),
      `${(row.compressShareOfCpu * 100).toFixed(0)}%`,
      `${(row.decompressShareOfCpu * 100).toFixed(0)}%`,
      Number.isNaN(row.brokerCpuSecondsPerGb) ? '-' : fmt(row.brokerCpuSecondsPerGb, 1),
      Number.isNaN(row.coresBusy) ? '-' : fmt(row.coresBusy, 2),
      fmt(row.maxRssMb)
    ])
  )
  // Each row against re-batching, pair by pair (the runs alternate, so a pair shares the broker's load).
  const rebatch = rows.find((r) => r.build === 'rebatch')
  const ratios =
    rebatch === undefined
      ? []
      : rows
          .filter((r) => r !== rebatch)
          .map((row) => {
            const pairs = row.sourceMbPerSecondRuns.map((v, i) => v / (rebatch.sourceMbPerSecondRuns[i] ?? NaN))
            const sorted = [...pairs].sort((a, b) => a - b)
            return (
              `${row.build} / rebatch, source MB/s: ${median(pairs).toFixed(2)}x median of the ${pairs.length} back-to-back pairs ` +
              `(${sorted.map((p) => p.toFixed(2)).join(', ')}); of the medians ${(row.sourceMbPerSecond / rebatch.sourceMbPerSecond).toFixed(2)}x`
            )
          })
  return [body, ...ratios, ...cpuBound(rows)].join('\n\n')
}

/**
 * What the machine's cores allow: copier plus broker CPU per source GB, measured, bounds the copy at
 * cores / (CPU s per MB) whatever the pipeline does, with nothing else running.
 */
function cpuBound(rows: readonly CopierRow[]): string[] {
  const source = rows.find((r) => r.build === 'source batching')
  if (source === undefined || Number.isNaN(source.brokerCpuSecondsPerGb)) return []
  const cores = availableParallelism()
  // The copier's CPU per source GB, all targets: with the broker's, what one source GB costs the machine.
  const copierPerGb = source.cpuSecondsPerGbPerTarget * source.targets
  const perGb = copierPerGb + source.brokerCpuSecondsPerGb
  return [
    `CPU bound, source batching: one source GB costs ${fmt(copierPerGb, 1)} CPU s in the copier (all targets) ` +
      `and ${fmt(source.brokerCpuSecondsPerGb, 1)} in the broker; on ${cores} cores that allows at most ` +
      `${fmt((cores * 1000) / perGb, 1)} source MB/s`
  ]
}

/** Source batching's source MB/s over rebatch's, of the medians (NaN without both rows). */
export function transcodingSpeedup(rows: readonly CopierRow[]): number {
  const source = rows.find((r) => r.build === 'source batching')
  const rebatch = rows.find((r) => r.build === 'rebatch')
  return source === undefined || rebatch === undefined ? NaN : source.sourceMbPerSecond / rebatch.sourceMbPerSecond
}
