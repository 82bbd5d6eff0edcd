import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { createCodec } from '../lib/codecs/index.js'
import { threadCpuSeconds } from '../lib/metrics/thread-cpu.js'
import { RecordBatchBuilder } from '../lib/protocol/record-batch-builder.js'
import { generateRecords } from '../lib/sources/generator-source.js'
import type { KeepingUpSample } from './keeping-up-client.js'
import { benchRuns, envInt, fmt, median, must, runNodeClient, table } from './lib/harness.js'
import { PARTITIONS, type BenchKafka } from './lib/kafka-env.js'

/**
 * Keeping up: generated http records at a rate fixed zstd:9 sustains, then 5x that, then back, each step
 * BENCH_KEEPUP_STEP_S seconds (default 10). The base rate is half what one core compresses at zstd:9, or
 * BENCH_KEEPUP_BASE records/s where the producer's own event loop cannot reach 5x that (a busy machine). Fixed zstd:1, fixed zstd:9 and zstd:adaptive each take the same
 * schedule, BENCH_RUNS times, interleaved so the machine's load falls on all three alike. Per configuration:
 * records lost or rejected, peak buffered bytes, seconds blocked in send, the ratio over the run, and the
 * adaptive level mix; medians with min-max, and the load average around each run. BENCH_KEEPUP_BEFORE, the path
 * of another build's dist/bench/keeping-up-client.js, adds its zstd:adaptive as a fourth row, interleaved alike.
 */

export const KEEPING_UP_TARGETS = ['zstd:1', 'zstd:9', 'zstd:adaptive'] as const

export interface KeepingUpRow {
  readonly target: string
  readonly runs: number
  readonly lostOrRejected: readonly number[]
  readonly peakBufferedBytes: readonly number[]
  readonly blockedSeconds: readonly number[]
  readonly ratio: readonly number[]
  readonly wallSeconds: readonly number[]
  readonly cpuSeconds: readonly number[]
  readonly levelMix: ReadonlyArray<KeepingUpSample['levelMix']>
  /** 1-minute load average before and after each run. */
  readonly load: ReadonlyArray<readonly [number, number]>
}

export interface KeepingUpResult {
  readonly baseRecordsPerSecond: number
  readonly zstd9RecordsPerCpuSecond: number
  readonly stepSeconds: number
  readonly schedule: string
  readonly records: number
  readonly rows: readonly KeepingUpRow[]
}

/**
 * What one core sustains at zstd:9 on these records, in records per CPU second, compressing 1 MiB batches the
 * way the producer builds them: half of it is the base rate, so zstd:9 keeps up with room to spare.
 */
export async function zstd9RecordsPerCpuSecond(): Promise<number> {
  const codec = createCodec({ codec: 'zstd', level: 9 })
  const batches: Uint8Array[] = []
  let builder = new RecordBatchBuilder(1024 * 1024)
  let records = 0
  for await (const item of generateRecords({ kind: 'http', seed: 7, records: 60_000 })) {
    if (item.kind !== 'record') continue
    if (!builder.tryAppend({ key: item.key, value: item.value }, item.timestampMs ?? 0)) {
      batches.push(builder.finish().records)
      builder = new RecordBatchBuilder(1024 * 1024)
      builder.tryAppend({ key: item.key, value: item.value }, item.timestampMs ?? 0)
    }
    records++
  }
  batches.push(builder.finish().records)
  codec.compress(batches[0] as Uint8Array)
  const cpu0 = threadCpuSeconds()
  for (const b of batches) codec.compress(b)
  return records / Math.max(threadCpuSeconds() - cpu0, 1e-3)
}

const CLIENT = fileURLToPath(new URL('./keeping-up-client.js', import.meta.url))

export async function keepingUpBench(kafka: BenchKafka, log: (s: string) => void): Promise<KeepingUpResult> {
  const stepSeconds = envInt('BENCH_KEEPUP_STEP_S', 10)
  const perCpuSecond = await zstd9RecordsPerCpuSecond()
  const base =
    process.env['BENCH_KEEPUP_BASE'] === undefined
      ? Math.max(1, Math.floor(perCpuSecond / 2))
      : envInt('BENCH_KEEPUP_BASE', 1)
  const schedule = `${base}:${stepSeconds},${base * 5}:${stepSeconds},${base}:${stepSeconds}`
  const records = base * stepSeconds * 7
  log(
    `keeping up: zstd:9 compresses ${Math.round(perCpuSecond)} records per CPU second here; schedule ${schedule} (${records} records)`
  )
  const before = process.env['BENCH_KEEPUP_BEFORE']
  const runs = [
    ...KEEPING_UP_TARGETS.map((target) => ({ row: target as string, codec: target as string, client: CLIENT })),
    ...(before === undefined ? [] : [{ row: 'zstd:adaptive (before)', codec: 'zstd:adaptive', client: before }])
  ]
  const rows = new Map<string, KeepingUpRow>(
    runs.map(({ row: target }) => [
      target,
      {
        target,
        runs: 0,
        lostOrRejected: [],
        peakBufferedBytes: [],
        blockedSeconds: [],
        ratio: [],
        wallSeconds: [],
        cpuSeconds: [],
        levelMix: [],
        load: []
      }
    ])
  )
  for (let run = 0; run < benchRuns(); run++) {
    for (const { row: target, codec, client } of runs) {
      const topic = await kafka.createTopic(`bench-keepup-${codec.replace(':', '-')}-${run}-${Date.now()}`, PARTITIONS)
      const loadBefore = loadavg()[0] ?? NaN
      const child = must(
        await runNodeClient(
          client,
          [
            '--brokers',
            kafka.brokers,
            '--topic',
            topic,
            '--codec',
            codec,
            '--rate',
            schedule,
            '--records',
            String(records)
          ],
          { timeoutMs: (stepSeconds * 3 + 120) * 1000 }
        ),
        `keeping-up ${target}`
      )
      const s = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as KeepingUpSample
      const row = rows.get(target) as KeepingUpRow & {
        runs: number
        lostOrRejected: number[]
        peakBufferedBytes: number[]
        blockedSeconds: number[]
        ratio: number[]
        wallSeconds: number[]
        cpuSeconds: number[]
        levelMix: Array<KeepingUpSample['levelMix']>
        load: Array<[number, number]>
      }
      row.runs++
      row.lostOrRejected.push(s.generated - s.acked + s.failed + s.rejected)
      row.peakBufferedBytes.push(s.peakBufferedBytes)
      row.blockedSeconds.push(s.blockedSeconds)
      row.ratio.push(s.compressedBytes === 0 ? NaN : s.uncompressedBytes / s.compressedBytes)
      row.wallSeconds.push(s.wallSeconds)
      row.cpuSeconds.push(child.cpuSeconds)
      row.levelMix.push(s.levelMix)
      row.load.push([loadBefore, loadavg()[0] ?? NaN])
      log(
        `keeping up ${target} run ${run + 1}: blocked ${s.blockedSeconds.toFixed(2)} s, peak buffered ${(s.peakBufferedBytes / 2 ** 20).toFixed(1)} MiB, ratio ${(s.uncompressedBytes / s.compressedBytes).toFixed(3)}`
      )
      await kafka.deleteCreatedTopics()
    }
  }
  return {
    baseRecordsPerSecond: base,
    zstd9RecordsPerCpuSecond: perCpuSecond,
    stepSeconds,
    schedule,
    records,
    rows: [...rows.values()]
  }
}

function spread(values: readonly number[], digits: number, scale = 1): string {
  const scaled = values.map((v) => v / scale)
  return `${fmt(median(scaled), digits)} (${fmt(Math.min(...scaled), digits)}-${fmt(Math.max(...scaled), digits)})`
}

/** Each level's share over all runs, weighted alike per run: `3×41%, 6×59%`. */
export function formatMix(mixes: ReadonlyArray<KeepingUpSample['levelMix']>): string {
  const shares = new Map<number, number>()
  for (const mix of mixes) for (const m of mix) shares.set(m.level, (shares.get(m.level) ?? 0) + m.share / mixes.length)
  return [...shares]
    .sort(([a], [b]) => a - b)
    .filter(([, s]) => s >= 0.005)
    .map(([l, s]) => `${l}×${Math.round(s * 100)}%`)
    .join(', ')
}

export function keepingUpTable(result: KeepingUpResult): string {
  return table(
    [
      'target',
      'runs',
      'lost or rejected',
      'peak buffered MiB',
      'blocked in send s',
      'ratio',
      'wall s',
      'CPU s',
      'levels (share of bytes)',
      'load 1m before-after'
    ],
    result.rows.map((r) => [
      r.target,
      String(r.runs),
      String(Math.max(...r.lostOrRejected)),
      spread(r.peakBufferedBytes, 1, 2 ** 20),
      spread(r.blockedSeconds, 2),
      spread(r.ratio, 3),
      spread(r.wallSeconds, 1),
      spread(r.cpuSeconds, 1),
      r.target.includes(':adaptive') ? formatMix(r.levelMix) : '-',
      r.load.map(([a, b]) => `${a.toFixed(1)}-${b.toFixed(1)}`).join(', ')
    ])
  )
}

/** The targets: adaptive blocks no longer than zstd:1 (within zstd:1's own run-to-run spread), and stores ≥5% better. */
export function keepingUpTargets(
  result: KeepingUpResult
): Array<{ name: string; value: number; threshold: string; met: boolean }> {
  const row = (t: string): KeepingUpRow | undefined => result.rows.find((r) => r.target === t)
  const fast = row('zstd:1')
  const adaptive = row('zstd:adaptive')
  if (fast === undefined || adaptive === undefined) return []
  const noise = Math.max(...fast.blockedSeconds) - Math.min(...fast.blockedSeconds)
  const blocked = median(adaptive.blockedSeconds) - median(fast.blockedSeconds)
  const gain = median(adaptive.ratio) / median(fast.ratio)
  const lost = Math.max(...result.rows.flatMap((r) => r.lostOrRejected))
  return [
    {
      name: 'keeping up: records lost or rejected (any target, any run)',
      value: lost,
      threshold: '= 0',
      met: lost === 0
    },
    {
      name: "keeping up: adaptive s blocked in send minus zstd:1's (medians)",
      value: blocked,
      threshold: `<= zstd:1's spread (${noise.toFixed(2)} s)`,
      met: blocked <= Math.max(noise, 0.05)
    },
    {
      name: 'keeping up: adaptive ratio / zstd:1 ratio (medians)',
      value: gain,
      threshold: '>= 1.05',
      met: gain >= 1.05
    }
  ]
}
