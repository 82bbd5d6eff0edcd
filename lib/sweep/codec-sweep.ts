import {
  CODEC_NAMES,
  compressToOwnBuffer,
  createCodec,
  DECOMPRESS_HEADROOM,
  decompressIntoBuffer,
  formatCodecSpec,
  isAdaptive,
  isCodecName,
  LEVEL_RANGES,
  parseCodecSpec,
  resolveCodecSpec,
  type Codec,
  type CodecName,
  type CodecSpec
} from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { processCpuSeconds } from '../metrics/thread-cpu.js'
import { BATCH } from '../protocol/batch-layout.js'
import { RecordBatchBuilder } from '../protocol/record-batch-builder.js'
import type { OutgoingRecord } from '../protocol/record.js'

/**
 * lzbench for Kafka batches: every codec and level runs over the same record sections the producer would
 * compress (real v2 batches, cut at batch.size), with CPU time measured per level and every round trip
 * checked byte for byte. Nothing touches Kafka.
 */

/** Uncompressed batches, as the producer would seal them: what the codecs are fed. */
export interface BatchSet {
  /** Records sections (the part Kafka compresses), one per batch. */
  readonly sections: readonly Buffer[]
  /** Records in each section, in the same order. */
  readonly recordCounts: readonly number[]
  readonly records: number
  readonly batchBytes: number
}

export interface LevelResult {
  /** `zstd:3`, `snappy`, `none`. */
  readonly target: string
  readonly codec: CodecName
  readonly level: number | null
  /** Whole batches before compression, headers included: what a `none` topic stores. */
  readonly uncompressedBytes: number
  /** Whole batches after compression, headers included: what the broker stores. */
  readonly compressedBytes: number
  /** uncompressedBytes / compressedBytes, so `none` is exactly 1. */
  readonly ratio: number
  /** Median over runs of records-section MB (10^6 bytes) compressed per process CPU second. */
  readonly compressMBPerSecond: number
  /** Median over runs of records-section MB (uncompressed output) restored per process CPU second. */
  readonly decompressMBPerSecond: number
  readonly runs: number
}

export interface BatchSizeResult {
  readonly batchBytes: number
  readonly batches: number
  readonly meanRecordsPerBatch: number
  /** Ratio per target (`zstd:3`, `lz4:1`) at this batch size. */
  readonly ratios: Readonly<Record<string, number>>
}

export interface SweepOptions {
  /** Timed repetitions per level; the median is reported. */
  readonly runs: number
  /**
   * Each run repeats passes over all batches until at least this much CPU time is spent, so fast codecs on
   * small inputs are not measured at the resolution of the CPU clock. 0 means one pass per run.
   */
  readonly minRunCpuSeconds?: number
  /** Called before each level is swept: `done` levels of `total` are. */
  readonly onLevel?: (done: number, total: number, target: string) => void
  /** Injected for tests; createCodec by default. */
  readonly codecFor?: (spec: CodecSpec) => Codec
}

export const DEFAULT_BATCH_SIZES = [16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024] as const
const LZ4HC_MAX_LEVEL = 12
export const BATCH_SWEEP_TARGETS: readonly CodecSpec[] = [
  { codec: 'zstd', level: 3 },
  { codec: 'lz4', level: 1 }
]

/**
 * The levels swept when the user names a codec without a level: every gzip level, lz4 1..12 (LZ4HC stops
 * at 12: 13..17 compress exactly as 12), zstd's two fast negative levels and 1..19, plus 20..22 with `ultra`
 * (they need far more memory and CPU).
 */
export function defaultLevels(codec: CodecName, ultra: boolean): CodecSpec[] {
  const range = LEVEL_RANGES[codec]
  if (range === undefined) return [{ codec, level: null }]
  let levels: number[]
  if (codec === 'lz4') levels = integers(range.min, LZ4HC_MAX_LEVEL)
  else if (codec === 'zstd') levels = [-5, -1, ...integers(1, ultra ? 22 : 19)]
  else levels = integers(range.min, range.max)
  return levels.map((level) => ({ codec, level }))
}

/** `zstd,lz4:1` -> zstd's default levels, then lz4 level 1; duplicates dropped, order kept. */
export function parseCodecList(list: string | undefined, ultra: boolean): CodecSpec[] {
  const items =
    list === undefined
      ? [...CODEC_NAMES]
      : list
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
  if (items.length === 0)
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--codecs is empty: use e.g. zstd,lz4:1 from ${CODEC_NAMES.join(', ')}`
    )
  const specs: CodecSpec[] = []
  for (const item of items) {
    if (item.includes(':')) {
      const spec = parseCodecSpec(item)
      // A sweep measures each level alone; which levels adaptive would pick depends on a producer's load.
      if (isAdaptive(spec))
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          `--codecs ${item}: the sweep measures fixed levels; name them (e.g. zstd:1,zstd:9), or compare zstd:adaptive with squeeze compare`
        )
      specs.push(spec)
      continue
    }
    const name = item.toLowerCase()
    if (!isCodecName(name))
      resolveCodecSpec(name) // throws the one-line "unknown codec ... use one of" error
    else specs.push(...defaultLevels(name, ultra))
  }
  const unique = new Map<string, CodecSpec>()
  for (const spec of specs) if (!unique.has(formatCodecSpec(spec))) unique.set(formatCodecSpec(spec), spec)
  return [...unique.values()]
}

/** Cuts records into batches of at most `batchBytes` (header included) with the producer's own builder. */
export function buildBatches(records: Iterable<OutgoingRecord>, batchBytes: number): BatchSet {
  const none = createCodec({ codec: 'none', level: null })
  const sections: Buffer[] = []
  const recordCounts: number[] = []
  let count = 0
  let builder = new RecordBatchBuilder(batchBytes)
  const seal = (): void => {
    if (builder.recordCount === 0) return
    // seal() with none returns a view of the builder's buffer; copy it so the next builder cannot reuse it.
    recordCounts.push(builder.recordCount)
    sections.push(Buffer.from(builder.seal(none).bytes.subarray(BATCH.HEADER_BYTES)))
    builder = new RecordBatchBuilder(batchBytes)
  }
  for (const record of records) {
    const timestamp = record.timestamp ?? 0
    if (!builder.tryAppend(record, timestamp)) {
      seal()
      builder.tryAppend(record, timestamp)
    }
    count++
  }
  seal()
  return { sections, recordCounts, records: count, batchBytes }
}

/** Batches already cut (a topic's, re-batched as the producer would) as the sweep's input; the sections are views, not copies. */
export function batchSetOf(
  batches: ReadonlyArray<{ readonly records: Uint8Array; readonly count: number }>,
  batchBytes: number
): BatchSet {
  return {
    sections: batches.map((b) => Buffer.from(b.records.buffer, b.records.byteOffset, b.records.byteLength)),
    recordCounts: batches.map((b) => b.count),
    records: batches.reduce((n, b) => n + b.count, 0),
    batchBytes
  }
}

/** Compresses and decompresses every batch with each spec, verifying each round trip; throws on the first mismatch. */
export function sweepCodecs(batches: BatchSet, specs: readonly CodecSpec[], options: SweepOptions): LevelResult[] {
  if (!Number.isInteger(options.runs) || options.runs < 1)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `runs must be a whole number >= 1, got ${options.runs}`)
  return specs.map((spec, i) => {
    options.onLevel?.(i, specs.length, formatCodecSpec(spec))
    return sweepOne(batches, spec, options)
  })
}

function sweepOne(batches: BatchSet, spec: CodecSpec, options: SweepOptions): LevelResult {
  const codec = (options.codecFor ?? createCodec)(spec)
  const target = formatCodecSpec(spec)
  const sectionBytes = batches.sections.reduce((sum, s) => sum + s.length, 0)
  const minCpu = options.minRunCpuSeconds ?? 0
  const compressRates: number[] = []
  const decompressRates: number[] = []
  let compressed: Buffer[] = []
  // Decompressed as squeeze's readers do, into one reused buffer: a fresh output per batch would add its page faults
  // to the codec's figure, and more to a fast codec's (half of LZ4's speed).
  const plain = Buffer.allocUnsafe(Math.max(0, ...batches.sections.map((s) => s.length)) + DECOMPRESS_HEADROOM)
  const decompressAll = (): void => {
    for (const section of compressed) decompressIntoBuffer(codec, section, plain)
  }
  for (let run = 0; run < options.runs; run++) {
    // As the producer compresses (into reused memory, then copied out at size), and with no worst-case output kept per batch.
    const c = timed(minCpu, () => batches.sections.map((s) => compressToOwnBuffer(codec, s)))
    compressed = c.result
    compressRates.push(rate(sectionBytes * c.passes, c.cpuSeconds))
    if (run === 0) verifyRoundTrip(target, batches.sections, compressed, codec, plain)
    const d = timed(minCpu, decompressAll)
    decompressRates.push(rate(sectionBytes * d.passes, d.cpuSeconds))
  }
  const headers = BATCH.HEADER_BYTES * batches.sections.length
  const compressedBytes = headers + compressed.reduce((sum, s) => sum + s.length, 0)
  const uncompressedBytes = headers + sectionBytes
  return {
    target,
    codec: spec.codec,
    level: spec.level,
    uncompressedBytes,
    compressedBytes,
    ratio: compressedBytes === 0 ? Number.NaN : uncompressedBytes / compressedBytes,
    compressMBPerSecond: median(compressRates),
    decompressMBPerSecond: median(decompressRates),
    runs: options.runs
  }
}

/**
 * Ratio of each target at each batch size: bigger batches give the codec more history to match against.
 * `batchesAt` cuts the same records at a batch size (buildBatches for a file, the producer's batching for a topic).
 */
export function sweepBatchSizes(
  batchesAt: (batchBytes: number) => BatchSet,
  sizes: readonly number[],
  specs: readonly CodecSpec[] = BATCH_SWEEP_TARGETS
): BatchSizeResult[] {
  return sizes.map((batchBytes) => {
    const batches = batchesAt(batchBytes)
    const ratios: Record<string, number> = {}
    for (const spec of specs) ratios[formatCodecSpec(spec)] = sweepOne(batches, spec, { runs: 1 }).ratio
    return {
      batchBytes,
      batches: batches.sections.length,
      meanRecordsPerBatch: batches.sections.length === 0 ? 0 : batches.records / batches.sections.length,
      ratios
    }
  })
}

/** Every batch decompressed both ways the sweep and the readers do (whole, and into `plain`) is the original. */
function verifyRoundTrip(
  target: string,
  originals: readonly Buffer[],
  compressed: readonly Buffer[],
  codec: Codec,
  plain: Buffer
): void {
  originals.forEach((original, i) => {
    const section = compressed[i]
    const back = section === undefined ? undefined : codec.decompress(section)
    let exact = back !== undefined && original.equals(back)
    if (exact && section !== undefined) {
      decompressIntoBuffer(codec, section, plain)
      exact = plain.subarray(0, original.length).equals(original)
    }
    if (!exact) {
      throw new SqueezeError(
        ErrorCodes.CODEC_CORRUPT,
        `${target} round trip is not byte-exact in batch ${i}: ${original.length} bytes in, ${back?.length ?? 0} bytes out`
      )
    }
  })
}

/** Repeats `work` until it has used `minCpuSeconds` of process CPU (at least once); returns the last result. */
function timed<T>(minCpuSeconds: number, work: () => T): { result: T; passes: number; cpuSeconds: number } {
  const before = processCpuSeconds()
  let passes = 0
  let result: T
  let cpuSeconds: number
  do {
    result = work()
    passes++
    cpuSeconds = processCpuSeconds() - before
  } while (cpuSeconds < minCpuSeconds)
  return { result, passes, cpuSeconds }
}

function rate(bytes: number, cpuSeconds: number): number {
  return cpuSeconds > 0 ? bytes / 1e6 / cpuSeconds : Number.POSITIVE_INFINITY
}

/** The middle value, or the mean of the two middle ones. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

function integers(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}
