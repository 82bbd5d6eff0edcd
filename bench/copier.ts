import { fileURLToPath } from 'node:url'
import { benchRuns, fmt, gb, mb, median, must, runChild, table } from './lib/harness.js'
import type { BenchKafka } from './lib/kafka-env.js'

/**
 * Copier benchmark: squeeze's copier (consumer group on the source, one producer writing every target with its
 * own codec) mirrors one source topic into six targets until the end offsets seen at start. Sustained source
 * MB/s and CPU are measured in-process from the first source record to the last target acknowledgement;
 * peak RSS by GNU time. No peer: no other tool in this run writes one source into several codecs.
 */

export const COPY_TARGETS = ['none', 'snappy', 'lz4', 'zstd:1', 'zstd:3', 'zstd:6']

export interface CopierRow {
  readonly runs: number
  readonly targets: number
  readonly sourceRecords: number
  readonly sourceMbPerSecond: number
  readonly recordsPerSecond: number
  readonly cpuSecondsPerGbPerTarget: number
  readonly compressShareOfCpu: number
  readonly maxRssMb: number
}

const CLIENT = fileURLToPath(new URL('./copier-client.js', import.meta.url))

export async function copierBench(kafka: BenchKafka, source: string, log: (s: string) => void): Promise<CopierRow> {
  const runs = benchRuns()
  const samples: Array<{ mbps: number; rps: number; cpuPerGbPerTarget: number; compressShare: number; rss: number; records: number }> = []
  for (let run = 0; run < runs; run++) {
    const prefix = `bench-copy-${run}-${Date.now()}`
    const r = must(await runChild(process.execPath, [CLIENT, '--brokers', kafka.brokers, '--topic', source, '--targets', COPY_TARGETS.join(','), '--prefix', prefix], { timeoutMs: 180_000 }), 'copier')
    const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { sourceRecords: number; sourceBytes: number; seconds: number; cpuSeconds: number; compressCpuSeconds: number; recordsFailed: number }
    if (out.recordsFailed > 0) throw new Error(`copier: ${out.recordsFailed} records undelivered`)
    samples.push({
      mbps: mb(out.sourceBytes) / out.seconds, rps: out.sourceRecords / out.seconds, cpuPerGbPerTarget: out.cpuSeconds / gb(out.sourceBytes) / COPY_TARGETS.length,
      compressShare: out.compressCpuSeconds / out.cpuSeconds, rss: r.maxRssMb, records: out.sourceRecords
    })
    log(`copier run ${run + 1}/${runs}: ${(mb(out.sourceBytes) / out.seconds).toFixed(1)} source MB/s, ${out.cpuSeconds.toFixed(2)} s CPU, ${r.maxRssMb.toFixed(0)} MB RSS`)
  }
  return {
    runs, targets: COPY_TARGETS.length, sourceRecords: samples[0]?.records ?? 0,
    sourceMbPerSecond: median(samples.map((s) => s.mbps)), recordsPerSecond: median(samples.map((s) => s.rps)),
    cpuSecondsPerGbPerTarget: median(samples.map((s) => s.cpuPerGbPerTarget)), compressShareOfCpu: median(samples.map((s) => s.compressShare)),
    maxRssMb: Math.max(...samples.map((s) => s.rss))
  }
}

export function copierTable(row: CopierRow): string {
  return table(['targets', 'source records', 'source MB/s (sustained)', 'source records/s', 'CPU s per GB per target', 'compress share of CPU', 'peak RSS MB'],
    [[COPY_TARGETS.join(','), fmt(row.sourceRecords), fmt(row.sourceMbPerSecond, 1), fmt(row.recordsPerSecond), fmt(row.cpuSecondsPerGbPerTarget, 1), `${(row.compressShareOfCpu * 100).toFixed(0)}%`, fmt(row.maxRssMb)]])
}
