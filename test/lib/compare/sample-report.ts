import type { CodecName } from '../../../lib/codecs/index.js'
import type { CompareReport, CompareTargetResult } from '../../../lib/compare/compare-report.js'
import { currentBaseline, type BaselineContext } from '../../../lib/compare/baseline.js'
import type { SourceBatch, SourceBatchScan } from '../../../lib/compare/source-batches.js'

const GIB = 1024 ** 3

/** A target whose derived figures agree with its inputs, as a real comparison would produce them. */
export function target(
  spec: string,
  storedBytes: number,
  compressCpuSecondsPerGiB: number,
  overrides: Partial<CompareTargetResult> = {}
): CompareTargetResult {
  const [codec, levelText] = spec.split(':') as [CodecName, string | undefined]
  const uncompressedBytes = 100 * 1024 * 1024
  const compressCpuSeconds = compressCpuSecondsPerGiB * (uncompressedBytes / GIB)
  return {
    target: spec,
    codec,
    level: levelText === undefined ? null : Number(levelText),
    topic: `logs.${spec.replace(':', '-')}`,
    records: 400_000,
    batches: 100,
    meanRecordsPerBatch: 4000,
    uncompressedBytes,
    sentBytes: storedBytes,
    storedBytes,
    storedBytesAllReplicas: storedBytes,
    ratio: uncompressedBytes / storedBytes,
    ratioVsNone: uncompressedBytes / storedBytes,
    compressCpuSeconds,
    compressCpuSecondsPerGiB,
    compressMBPerSecondPerCore: compressCpuSeconds === 0 ? 0 : uncompressedBytes / 1e6 / compressCpuSeconds,
    decompressCpuSeconds: 0.05,
    decompressCpuSecondsPerGiB: 0.5,
    decodeCpuSecondsPerGiB: 1.5,
    consumerRecordsPerSecond: 250_000,
    recompression: { verdict: 'kept', batchesChecked: 100, batchesRewritten: 0 },
    digest: 'sha256:4f1c0e',
    ...overrides
  }
}

const MIB = 1024 * 1024

/**
 * Shaped like real access-log measurements: lz4 cheap but weak, zstd:3 near the knee, zstd:19 and gzip:9
 * far up the CPU axis, and gzip:6 dominated by zstd:3 (more CPU, bigger output).
 */
export const SAMPLE_TARGETS: readonly CompareTargetResult[] = [
  target('none', 100 * MIB, 0),
  target('lz4:1', 20 * MIB, 1.2),
  target('zstd:1', 11 * MIB, 1.6),
  target('zstd:3', 10 * MIB, 2),
  target('gzip:6', 12 * MIB, 9),
  target('zstd:19', 7.5 * MIB, 120),
  target('gzip:9', 11.5 * MIB, 60)
]

export function sampleReport(targets: readonly CompareTargetResult[] = SAMPLE_TARGETS): CompareReport {
  return {
    generatedAt: '2025-06-01T12:00:00.000Z',
    squeezeVersion: '0.1.0',
    source: {
      kind: 'topic',
      topic: 'prod.access-logs',
      description: 'topic prod.access-logs, partitions 0-5, last 400000 records',
      records: 400_000,
      partitions: 6,
      uncompressedBytes: 100 * MIB,
      ingestRate: {
        bytesPerSecond: (400_000 * 262.144) / 3600,
        recordsPerSecond: 400_000 / 3600,
        bytesPerRecord: 262.144,
        window: {
          from: '2025-06-01T11:00:00.000Z',
          to: '2025-06-01T12:00:00.000Z',
          source: 'broker-offsets',
          records: 400_000,
          lookbackSeconds: 86_400
        }
      }
    },
    settings: { lingerMs: 100, batchSizeBytes: 1_048_576, replicationFactor: 3, consumers: 2 },
    current: null,
    targets,
    recommendation: {
      target: 'zstd:3',
      criterion: 'best-ratio-per-cpu',
      undominated: 4,
      chosen: { target: 'zstd:3', ratio: 10, compressCpuSecondsPerGiB: 2, storedBytes: 10 * MIB },
      nextStep: { target: 'zstd:19', ratio: 100 / 7.5, compressCpuSecondsPerGiB: 120, storedBytes: 7.5 * MIB },
      bytesPerDaySaved: 123_456_789_012,
      bytesSavedPerGiB: 4_831_838_208
    }
  }
}

/** Source batches as their producers stored them: `batches` batches of `batchBytes` and `records` records each, per codec. */
export function sampleScan(
  ...parts: ReadonlyArray<{ codec: string; batches: number; batchBytes: number; records: number }>
): SourceBatchScan {
  const batches: SourceBatch[] = parts.flatMap((p) =>
    Array.from({ length: p.batches }, (_, i) => ({
      partition: i % 6,
      codec: p.codec,
      records: p.records,
      storedBytes: p.batchBytes,
      uncompressedBytes: p.records * 262,
      decompressCpuSeconds: 0.001
    }))
  )
  return { batches, corruptBatches: 0 }
}

/**
 * sampleReport with today's batches, 20 records each: by default lz4 at about lz4:1's size, so zstd:3 stores half
 * of today's bytes.
 */
export function sampleReportWithToday(today = { codec: 'lz4', batchBytes: 1049 }): CompareReport {
  const report = sampleReport()
  const current = currentBaseline(sampleScan({ ...today, batches: 20_000, records: 20 }), sampleBaselineContext(report))
  return { ...report, current }
}

/** The baseline's context for a sample report: its rows, rate and recommendation, 3 replicas and 2 groups. */
export function sampleBaselineContext(report: CompareReport): BaselineContext {
  return {
    targets: report.targets,
    recommendation: report.recommendation,
    ingestRate: report.source.ingestRate,
    uncompressedBytesPerRecord: 262.144,
    replicationFactor: 3,
    consumers: 2,
    lingerMs: 100,
    batchSizeBytes: 1_048_576
  }
}
