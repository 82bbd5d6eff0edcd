// compare, copy vs projection: the same source topic and targets through both modes on one embedded broker.
// Usage: node dist/bench/compare-modes.js [MiB of source, default 64] [--mode both|copy|projection].
// Prints a table and writes bench-compare-modes-<mode>-<MiB>MiB.json; a projection-only run reads the copy-only
// run's file for the same MiB (so a long copy run need not be repeated). Node CPU is this process's (every
// thread); the broker's JVM is not counted.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { allCoresBoundSeconds, sweepAllCores, type AllCoresSweep } from '../lib/sweep/all-cores-sweep.js'
import { buildBatches, sweepCodecs, type BatchSet } from '../lib/sweep/codec-sweep.js'
import { installKafkajsDecoders } from '../lib/codecs/kafkajs-plugin.js'
import { runProjection, type ProjectionOutcome } from '../lib/compare/projection/run-projection.js'
import { runCompare, type CompareOutcome } from '../lib/compare/run-compare.js'
import { COPIER_PRODUCER_DEFAULTS } from '../lib/copier/copier.js'
import { DEFAULT_TARGETS, parseTargets } from '../lib/copier/targets.js'
import { killEmbeddedBrokersOnExit, startKraftBroker } from '../lib/embedded-broker/kraft-broker.js'
import { createGenerator } from '../lib/generators/index.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createTopicsAndWait } from '../lib/kafka/topics.js'
import { createLogger } from '../lib/log/logger.js'
import { threadCpuSeconds } from '../lib/metrics/thread-cpu.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../lib/producer/producer.js'
import { BATCH } from '../lib/protocol/batch-layout.js'
import type { OutgoingRecord } from '../lib/protocol/record.js'
import { corpusValues } from './lib/inputs.js'

const { values: flags, positionals } = parseArgs({
  options: { mode: { type: 'string', default: 'both' } },
  allowPositionals: true
})
const mib = Number(positionals[0] ?? 64)
const mode = flags.mode as 'both' | 'copy' | 'projection'
if (!['both', 'copy', 'projection'].includes(mode) || !(mib > 0))
  throw new Error('usage: compare-modes.js [MiB] [--mode both|copy|projection]')
const PARTITIONS = 3
/** Records per millisecond of record time: a 1 MiB batch fills in a few ms, so both modes close batches on batch.size alone. */
const RECORDS_PER_MS = 1000
/** Source records the codec ceiling is measured on: enough for every target's speed, little enough for a minute. */
const CEILING_SAMPLE_BYTES = 32 * 1024 * 1024

const log = createLogger({ level: 'warn', name: 'bench-compare-modes' })
const loadAtStart = loadavg()

/**
 * The source: generated http request logs (binary, seed 7) and the real Apache access log (test/fixtures/corpus)
 * in turn, over 3 partitions, stamped RECORDS_PER_MS a millisecond from a minute ago. Deterministic, so a copy
 * run and a projection run in two processes see the same records.
 */
function* sourceRecords(
  limitBytes: number,
  topic: string
): Generator<OutgoingRecord & { topic: string; partition: number }> {
  const http = createGenerator('http', { seed: 7 })
  const corpus = corpusValues(100_000)
  const start = Date.now() - 60_000
  let bytes = 0
  for (let i = 0; bytes < limitBytes; i++) {
    const value = i % 2 === 0 ? http.next().value : (corpus[(i >> 1) % corpus.length] as Buffer)
    bytes += value.length
    yield { topic, partition: i % PARTITIONS, key: null, value, timestamp: start + Math.floor(i / RECORDS_PER_MS) }
  }
}

async function fill(producer: Producer, topic: string): Promise<{ bytes: number; records: number }> {
  let bytes = 0
  let records = 0
  let block: Array<OutgoingRecord & { topic: string; partition: number }> = []
  for (const record of sourceRecords(mib * 1024 * 1024, topic)) {
    block.push(record)
    bytes += record.value?.length ?? 0
    records++
    if (block.length === 5000) {
      await producer.sendMany(block)
      block = []
    }
  }
  await producer.sendMany(block)
  await producer.flush()
  return { bytes, records }
}

/** The first records of the source batched at batch.size: what both codec ceilings are measured on. */
const ceilingBatches = (): BatchSet =>
  buildBatches(
    sourceRecords(Math.min(CEILING_SAMPLE_BYTES, mib * 1024 * 1024), 'ceiling'),
    DEFAULT_PRODUCER_CONFIG.batchSizeBytes
  )

/**
 * The codec ceiling on all cores: one thread per core, all compressing every target at once; its bound is the wall
 * time those cores took, scaled to the source. Run right before and right after the projection, so that on a shared
 * machine the load it met is bracketed.
 */
const allCoresCeiling = (
  targets: ReturnType<typeof parseTargets>,
  threads: number,
  readBack = false
): Promise<AllCoresSweep> =>
  sweepAllCores(
    ceilingBatches(),
    targets.map((t) => t.spec),
    { threads, rounds: 3, readBack }
  )

/** A bound swept right before and right after the projection, scaled to `sectionBytes`: both, and their mean. */
function bracketedBound(
  before: AllCoresSweep,
  after: AllCoresSweep,
  sectionBytes: number
): { before: number; after: number; mean: number } {
  const [b, a] = [allCoresBoundSeconds(before, sectionBytes), allCoresBoundSeconds(after, sectionBytes)]
  return { before: b, after: a, mean: (b + a) / 2 }
}

/**
 * The codec ceiling single-core: each target's in-process compress speed (MB of records per CPU second) with one
 * thread alone, as bench/codec-ceiling.ts measures it; the bound from it assumes the cores scale perfectly.
 */
function singleCoreCeiling(targets: ReturnType<typeof parseTargets>): Map<string, number> {
  const speeds = sweepCodecs(
    ceilingBatches(),
    targets.map((t) => t.spec),
    { runs: 3, minRunCpuSeconds: 0.3 }
  )
  return new Map(speeds.map((s) => [s.target, s.compressMBPerSecond]))
}

const measure = async <T>(run: () => Promise<T>): Promise<{ result: T; seconds: number; cpuSeconds: number }> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const result = await run()
  const used = process.cpuUsage(cpu)
  return { result, seconds: (performance.now() - start) / 1000, cpuSeconds: (used.user + used.system) / 1e6 }
}

installKafkajsDecoders()
killEmbeddedBrokersOnExit()
// A loaded machine can take minutes to start a JVM broker.
const broker = await startKraftBroker({ heapMb: 1024, startTimeoutMs: 600_000 })
try {
  const connection = { ...DEFAULT_CONNECTION, brokers: [broker.bootstrap], clientId: 'bench' }
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  const topic = `bench-modes-${Date.now()}`
  await createTopicsAndWait(admin, [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }])
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'lz4', level: 1 } },
    { cluster: createCluster(connection, log), log }
  )
  await producer.start()
  const source = await fill(producer, topic)
  await producer.close()
  const targets = parseTargets(DEFAULT_TARGETS.join(','), topic)
  const threads = availableParallelism()
  const common = {
    connection,
    sourceTopic: topic,
    sourceDescription: { kind: 'topic' as const, description: topic },
    targets,
    format: null,
    rateEvidence: { kind: 'topic' as const, lookbackMs: 3_600_000 },
    consumers: 1,
    version: 'bench',
    log
  }
  const rows: Record<string, unknown> = {
    sourceMiB: source.bytes / 1024 / 1024,
    records: source.records,
    targets: targets.length,
    cores: threads,
    loadAverageAtStart: loadAtStart
  }
  const say = (line: string): void => void process.stdout.write(`${line}\n`)
  say(
    `source ${(source.bytes / 1024 / 1024).toFixed(1)} MiB (${source.records} records), ${targets.length} targets, ${threads} cores, load ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`
  )

  let copy: { result: CompareOutcome; seconds: number; cpuSeconds: number } | undefined
  if (mode !== 'projection') {
    copy = await measure(() =>
      runCompare({
        ...common,
        producer: { ...DEFAULT_PRODUCER_CONFIG, ...COPIER_PRODUCER_DEFAULTS },
        keepTopics: false
      })
    )
    rows['copy'] = {
      seconds: copy.seconds,
      nodeCpuSeconds: copy.cpuSeconds,
      storedBytes: Object.fromEntries(copy.result.report.targets.map((t) => [t.target, t.storedBytes])),
      loadAverageAfter: loadavg()
    }
    say(`copy:       ${copy.seconds.toFixed(1)} s wall, ${copy.cpuSeconds.toFixed(1)} s node CPU`)
  }
  if (mode !== 'copy') {
    // Wall-clock phases from the projection's own progress lines: reading (and compressing as it reads), then the tail.
    const phases: Array<{ at: number; what: string }> = []
    const allCoresBefore = await allCoresCeiling(targets, threads)
    // The projection also decompresses every batch it builds, to report decompression CPU: the codec work it
    // cannot do without is compress + decompress, measured the same way (before and after, in mirror order).
    const readBackBefore = await allCoresCeiling(targets, threads, true)
    const started = performance.now()
    const mainCpuAtStart = threadCpuSeconds()
    const projection = await measure(() =>
      runProjection({
        ...common,
        batching: DEFAULT_PRODUCER_CONFIG,
        threads,
        onProgress: ({ phase: what }) => {
          // The read reports its count repeatedly; a phase is noted once, when it starts.
          if (phases.at(-1)?.what !== what) phases.push({ at: (performance.now() - started) / 1000, what })
        }
      })
    )
    // The main thread reads, decompresses, decodes and re-batches the source; the projection threads do the rest.
    const mainThreadCpuSeconds = threadCpuSeconds() - mainCpuAtStart
    const report = (projection.result as ProjectionOutcome).report
    const readBackAfter = await allCoresCeiling(targets, threads, true)
    const allCoresAfter = await allCoresCeiling(targets, threads)
    const singleCore = singleCoreCeiling(targets)
    // Records sections only: the ceiling's MB/s count what the codec compresses, not the batch headers.
    const sectionBytes =
      report.targets.length === 0
        ? 0
        : report.source.uncompressedBytes - (report.targets[0]?.batches ?? 0) * BATCH.HEADER_BYTES
    // Single core x cores: every target's compress CPU for this source at its speed alone on an idle core, spread perfectly over the cores.
    const singleCoreSeconds =
      report.targets.reduce(
        (n, t) => n + sectionBytes / 1e6 / (singleCore.get(t.target) ?? Number.POSITIVE_INFINITY),
        0
      ) / threads
    // All cores: what the cores delivered compressing every target together, scaled to this source's records; the mean of before and after.
    const {
      before: allCoresBeforeSeconds,
      after: allCoresAfterSeconds,
      mean: allCoresSeconds
    } = bracketedBound(allCoresBefore, allCoresAfter, sectionBytes)
    const {
      before: readBackBeforeSeconds,
      after: readBackAfterSeconds,
      mean: readBackSeconds
    } = bracketedBound(readBackBefore, readBackAfter, sectionBytes)
    // The same from the threads' CPU clocks: slowed by each other, not by other processes taking the cores (a shared machine's load).
    const allCoresCpuSeconds =
      report.targets.reduce(
        (n, t) =>
          n + sectionBytes / 1e6 / (allCoresAfter.compressMBPerCpuSecond.get(t.target) ?? Number.POSITIVE_INFINITY),
        0
      ) / threads
    const ownCompressCpu = report.targets.reduce((n, t) => n + t.compressCpuSeconds, 0)
    rows['projection'] = {
      seconds: projection.seconds,
      nodeCpuSeconds: projection.cpuSeconds,
      mainThreadCpuSeconds,
      phases: [...phases, { at: projection.seconds, what: 'done' }],
      compressCpuSeconds: ownCompressCpu,
      decompressCpuSeconds: report.targets.reduce((n, t) => n + t.decompressCpuSeconds, 0),
      singleCoreCompressMBPerCpuSecond: Object.fromEntries(singleCore),
      singleCoreTimesCoresCeilingSeconds: singleCoreSeconds,
      fractionOfSingleCoreTimesCoresCeiling: singleCoreSeconds / projection.seconds,
      allCoresCompressMBPerCpuSecond: Object.fromEntries(allCoresAfter.compressMBPerCpuSecond),
      allCoresCeilingSeconds: allCoresSeconds,
      fractionOfAllCoresCeiling: allCoresSeconds / projection.seconds,
      allCoresCeilingSecondsBefore: allCoresBeforeSeconds,
      allCoresCeilingSecondsAfter: allCoresAfterSeconds,
      allCoresReadBackCeilingSeconds: readBackSeconds,
      fractionOfAllCoresReadBackCeiling: readBackSeconds / projection.seconds,
      allCoresReadBackCeilingSecondsBefore: readBackBeforeSeconds,
      allCoresReadBackCeilingSecondsAfter: readBackAfterSeconds,
      allCoresDecompressMBPerCpuSecond: Object.fromEntries(readBackAfter.decompressMBPerCpuSecond),
      allCoresCpuCeilingSeconds: allCoresCpuSeconds,
      fractionOfAllCoresCpuCeiling: allCoresCpuSeconds / projection.seconds,
      allCoresSweep: {
        threads,
        rounds: allCoresAfter.rounds,
        medianRoundWallSecondsBefore: allCoresBefore.wallSeconds,
        medianRoundWallSecondsAfter: allCoresAfter.wallSeconds,
        sectionMiBPerThread: allCoresAfter.sectionBytesPerThread / 1024 / 1024
      },
      ownCompressCeilingSeconds: ownCompressCpu / threads,
      storedBytes: Object.fromEntries(report.targets.map((t) => [t.target, t.storedBytes])),
      meanRecordsPerBatch: report.targets[0]?.meanRecordsPerBatch,
      loadAverageAfter: loadavg()
    }
    const pct = (bound: number): string => `${((bound / projection.seconds) * 100).toFixed(0)}%`
    say(
      `projection: ${projection.seconds.toFixed(1)} s wall, ${projection.cpuSeconds.toFixed(1)} s node CPU (main thread ${mainThreadCpuSeconds.toFixed(1)} s, compress ${ownCompressCpu.toFixed(1)} s)`
    )
    say(
      `  codec ceiling, all ${threads} cores compressing at once: ${allCoresSeconds.toFixed(2)} s (${pct(allCoresSeconds)}; ${allCoresBeforeSeconds.toFixed(2)} s before the projection, ${allCoresAfterSeconds.toFixed(2)} s after)`
    )
    say(
      `  codec ceiling, all cores by their CPU clocks:     ${allCoresCpuSeconds.toFixed(2)} s (${pct(allCoresCpuSeconds)})`
    )
    say(
      `  compress + read back (decompress), all cores:     ${readBackSeconds.toFixed(2)} s (${pct(readBackSeconds)}; ${readBackBeforeSeconds.toFixed(2)} s before, ${readBackAfterSeconds.toFixed(2)} s after)`
    )
    say(
      `  codec ceiling, single-core speed x ${threads} cores:      ${singleCoreSeconds.toFixed(2)} s (${pct(singleCoreSeconds)})`
    )
    for (const p of phases) say(`  ${p.at.toFixed(1).padStart(7)} s  ${p.what}`)
  }
  const copyFile = `bench-compare-modes-copy-${mib}MiB.json`
  const copyRow = (rows['copy'] ??
    (mode === 'projection' && existsSync(copyFile)
      ? (JSON.parse(readFileSync(copyFile, 'utf8')) as { copy?: unknown }).copy
      : undefined)) as { seconds: number; nodeCpuSeconds: number } | undefined
  const projectionRow = rows['projection'] as { seconds: number; nodeCpuSeconds: number } | undefined
  if (copyRow !== undefined && projectionRow !== undefined) {
    rows['copy'] = copyRow
    rows['speedup'] = copyRow.seconds / projectionRow.seconds
    rows['cpuRatio'] = copyRow.nodeCpuSeconds / projectionRow.nodeCpuSeconds
    say(
      `projection is ${(copyRow.seconds / projectionRow.seconds).toFixed(1)}x faster (wall), ${(copyRow.nodeCpuSeconds / projectionRow.nodeCpuSeconds).toFixed(1)}x less node CPU`
    )
  }
  writeFileSync(`bench-compare-modes-${mode}-${mib}MiB.json`, `${JSON.stringify(rows, null, 2)}\n`)
  await admin.disconnect()
} finally {
  await broker.stop()
}
