import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { auditScaleBench, auditScaleNote, auditScaleTable, type AuditScaleResult } from './audit-scale.js'
import { ceilingFor, ceilingTable, codecCeiling, type CeilingRow } from './codec-ceiling.js'
import { consumerBench, consumerTable, type ConsumerRow } from './consumer.js'
import { copierBench, copierTable, transcodingSpeedup, type CopierRow } from './copier.js'
import {
  endToEndBench,
  endToEndTable,
  endToEndTitle,
  LONG_KIND,
  versusPeer,
  type EndToEndResult
} from './end-to-end.js'
import {
  positionsBench,
  positionsRatio,
  positionsTable,
  positionsTitle,
  type PositionsResult
} from './positions-rate.js'
import { restartBench, restartTable, restartTitle, type RestartResult } from './restart.js'
import {
  benchRuns,
  envInt,
  median,
  must,
  ratio,
  runNodeClient,
  sectionFailure,
  sectionFailureBody,
  writeJson
} from './lib/harness.js'
import { inputsFor, readLengthPrefixed, writeInputs, type InputFiles, type InputKind } from './lib/inputs.js'
import { keepingUpBench, keepingUpTable, keepingUpTargets, type KeepingUpResult } from './keeping-up.js'
import { openBenchKafka, PARTITIONS } from './lib/kafka-env.js'
import { confluentPeer } from './lib/peers.js'
import { benchEnv, buildCommit, LoadSampler, writeResultsPage } from './lib/results-page.js'
import { parseRates, type ParseRates } from './parse.js'
import {
  BATCH_BYTES,
  compressionPathNote,
  javaOrderedRatio,
  LINGER_MS,
  producerBench,
  producerTable,
  spreadTable,
  type ProducerRow
} from './producer.js'
import type { CodecSpec } from '../lib/codecs/index.js'

/**
 * Every benchmark in one run on one broker and the same inputs:
 *   node dist/bench/run.js [ceiling] [producer] [levels] [lz4] [keeping-up] [consumer] [copier] [decode] [parse] [e2e]
 *     [restart] [positions] [audit]   (default: all)
 * `restart`: the shipper SIGKILLed 10 times while shipping a growing file, at least once, exactly once and rsyslog
 * imfile (bench/restart.ts); `positions`: a file set with read positions against the single-file path
 * (bench/positions-rate.ts).
 * `levels`: zstd:6 and zstd:9 with squeeze's compression pool at 1 and 2 threads, kcat and ProducerPerformance;
 * `lz4`: squeeze and kcat at lz4:1, at least 5 runs.
 * Env: BENCH_RUNS (3), BENCH_CORPUS_RECORDS (200000), BENCH_HTTP_RECORDS (100000), BENCH_PARTITIONS (3),
 * BENCH_LINGER_MS (100), BENCH_BATCH_BYTES (1048576), BENCH_E2E_LINES (200000), BENCH_E2E_LONG_LINES (2000000), KAFKA_BROKERS (else the embedded broker),
 * BENCH_COPIER_BASELINE (another build's dist/bench/copier-client.js, run alternately with this one: bench/copier.ts).
 * Prints each table and writes bench-<section>.json plus bench-summary.json (targets met or missed).
 */

interface Target {
  readonly name: string
  readonly value: number
  readonly threshold: string
  readonly met: boolean
}

const log = (s: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`)
}

/** This run's tables, for docs/benchmarks.md. */
const sections: Array<{ title: string; body: string }> = []

function section(title: string, body: string): void {
  sections.push({ title, body })
  process.stdout.write(`\n## ${title}\n\n${body}\n`)
}

/** The sections that failed in this run, each with its error's first line. */
const failed: Array<{ name: string; error: string }> = []

/**
 * Runs one section; a failure is logged and recorded as a section of the page and an unmet target, and the run goes
 * on, so one peer's crash late in an hour-long run does not throw away every other section's figures.
 */
async function attempt(name: string, run: () => Promise<void>): Promise<void> {
  try {
    await run()
  } catch (err) {
    // The record keeps the failed child's stderr tail: the message's first line alone says only that it exited.
    const failure = sectionFailure(err)
    failed.push({ name, error: failure.error })
    log(`section ${name} failed: ${failure.error}`)
    section(`${name}: failed in this run`, sectionFailureBody(failure))
  }
}

async function httpDecodeRatio(): Promise<{ ratio: number; runs: number[] }> {
  const script = fileURLToPath(new URL('./http-decode.js', import.meta.url))
  const ratios: number[] = []
  for (let i = 0; i < benchRuns(); i++) {
    must(await runNodeClient(script, ['bench-http-decode.json']), 'http-decode')
    const r = JSON.parse(readFileSync('bench-http-decode.json', 'utf8')) as { ratios: { fastVsJsonParse: number } }
    ratios.push(r.ratios.fastVsJsonParse)
  }
  return { ratio: median(ratios), runs: ratios }
}

function parseTable(rates: ParseRates): string {
  const rows = Object.entries(rates.linesPerSecond).map(
    ([kind, rate]) => `| ${kind} encodeLine | ${rate.toLocaleString('en-US')} |`
  )
  const inPlace = Object.entries(rates.inPlaceLinesPerSecond).map(
    ([kind, rate]) => `| ${kind} lines read in place | ${rate.toLocaleString('en-US')} |`
  )
  return [
    '| lines or records per CPU second (best of 5 passes) | |',
    '|---|---|',
    ...rows,
    ...inPlace,
    `| http generator | ${rates.generatorRecordsPerSecond.toLocaleString('en-US')} |`
  ].join('\n')
}

function evaluate(
  producer: readonly ProducerRow[],
  javaRatios: ReadonlyMap<string, number>,
  ceilings: readonly CeilingRow[],
  consumer: readonly ConsumerRow[],
  copier: CopierRow | undefined,
  decode: number | undefined,
  parse: ParseRates | undefined,
  e2e: EndToEndResult | undefined
): Target[] {
  const targets: Target[] = []
  const add = (name: string, value: number, threshold: string, met: boolean): void => {
    targets.push({ name, value, threshold, met: Number.isFinite(value) && met })
  }
  const row = (peer: string, input: string, target: string): ProducerRow | undefined =>
    producer.find((r) => r.peer === peer && r.input === input && r.target === target)
  for (const s of producer.filter((r) => r.peer === 'squeeze')) {
    const where = `${s.input} ${s.target}`
    const java = row('java-perf', s.input, s.target)
    if (java !== undefined)
      add(
        `producer records/s vs Java ProducerPerformance (${where})`,
        ratio(s.recordsPerSecond, java.recordsPerSecond),
        '>= 1.0x',
        ratio(s.recordsPerSecond, java.recordsPerSecond) >= 1.0
      )
    const kcat = row('kcat', s.input, s.target)
    if (kcat !== undefined) {
      add(
        `producer records/s vs kcat (${where})`,
        ratio(s.recordsPerSecond, kcat.recordsPerSecond),
        '>= 0.8x',
        ratio(s.recordsPerSecond, kcat.recordsPerSecond) >= 0.8
      )
      add(
        `producer CPU/GB vs kcat (${where})`,
        ratio(s.cpuSecondsPerGb, kcat.cpuSecondsPerGb),
        '<= 1.5x',
        ratio(s.cpuSecondsPerGb, kcat.cpuSecondsPerGb) <= 1.5
      )
    }
    // Against the library on the run's own batches at the same moment; the ceiling section's figure (file order cut
    // at batch.size, measured minutes apart) only where that was not measured.
    const ceiling = ceilingFor(ceilings, s.input, s.target)
    const vsCeiling =
      s.compressVsCeiling ??
      (ceiling !== undefined && s.compressMBps !== undefined ? s.compressMBps / ceiling.libCompressMBps : undefined)
    if (vsCeiling !== undefined)
      add(`compression path vs in-process codec ceiling (${where})`, vsCeiling, '>= 0.85', vsCeiling >= 0.85)
    const javaRatio = javaRatios.get(`${s.input}|${s.target}`)
    if (javaRatio !== undefined)
      add(
        `stored ratio vs Java producer, file order (${where})`,
        s.ratio / javaRatio,
        'within 2% (0.98..1.02 or better)',
        s.ratio / javaRatio >= 0.98
      )
    add(`producer peak RSS MB (${where})`, s.maxRssMb, '<= 300', s.maxRssMb <= 300)
  }
  for (const c of consumer.filter((r) => r.peer === 'squeeze-decode')) {
    const kcat = consumer.find((r) => r.peer === 'kcat' && r.target === c.target)
    // zstd is what the consumer is asked to read at kcat's rate; the fast codec keeps the looser goal.
    const least = c.target.startsWith('zstd') ? 1.0 : 0.8
    if (kcat !== undefined)
      add(
        `consumer decompress+decode records/s vs kcat (http ${c.target})`,
        ratio(c.recordsPerSecond, kcat.recordsPerSecond),
        `>= ${least.toFixed(1)}x`,
        ratio(c.recordsPerSecond, kcat.recordsPerSecond) >= least
      )
    add(`consumer peak RSS MB (http ${c.target})`, c.maxRssMb, '<= 300', c.maxRssMb <= 300)
  }
  if (copier !== undefined) add('copier peak RSS MB (6 targets)', copier.maxRssMb, '<= 300', copier.maxRssMb <= 300)
  if (decode !== undefined) add("Cap'n Proto HTTP decode vs JSON.parse records/s", decode, '>= 1.0x', decode >= 1.0)
  if (parse !== undefined) {
    for (const [kind, rate] of Object.entries(parse.linesPerSecond))
      add(`${kind} encodeLine lines per CPU s (k)`, rate / 1000, '>= 300', rate >= 300_000)
    add(
      'http generator records per CPU s (k)',
      parse.generatorRecordsPerSecond / 1000,
      '>= 500',
      parse.generatorRecordsPerSecond >= 500_000
    )
  }
  if (e2e !== undefined) {
    for (const r of e2e.rows.filter((x) => x.peer === 'squeeze')) {
      const long = r.lines !== e2e.lines
      const rsyslog = versusPeer(e2e.rows, r.kind, 'rsyslog', 'squeeze', r.lines)
      const kcat = versusPeer(e2e.rows, r.kind, 'kcat', 'squeeze', r.lines)
      const name = long ? `${r.kind} ${r.lines} lines` : r.kind
      if (!long && (r.kind === 'http' || r.kind === 'syslog'))
        add(`end to end lines/s vs rsyslog+omkafka (${name} ${e2e.codec})`, rsyslog, '>= 1.0x', rsyslog >= 1.0)
      // The access log's Cap'n Proto records at kcat's rate when start-up weighs little, and close to it when it does.
      const least = long ? 1.0 : r.kind === LONG_KIND ? 0.6 : 0.5
      add(`end to end lines/s vs kcat -P -l (${name} ${e2e.codec})`, kcat, `>= ${least.toFixed(1)}x`, kcat >= least)
      add(`end to end peak RSS MB (${name})`, r.median.maxRssMb, '<= 300', r.median.maxRssMb <= 300)
    }
  }
  return targets
}

const LEVEL_TARGETS: readonly CodecSpec[] = [
  { codec: 'zstd', level: 6 },
  { codec: 'zstd', level: 9 }
]

/** The compression pool at zstd:6, and the lz4 producer, each against kcat (ratio of medians over the runs). */
function poolAndLz4Targets(levels: readonly ProducerRow[], lz4: readonly ProducerRow[]): Target[] {
  const versus = (rows: readonly ProducerRow[], peer: string, target: string, name: string): Target[] =>
    rows
      .filter((r) => r.peer === peer && r.target === target)
      .flatMap((s) => {
        const kcat = rows.find((r) => r.peer === 'kcat' && r.input === s.input && r.target === s.target)
        const value = kcat === undefined ? NaN : ratio(s.recordsPerSecond, kcat.recordsPerSecond)
        return [{ name: `${name} (${s.input}, median of ${s.runs})`, value, threshold: '>= 1.0x', met: value >= 1.0 }]
      })
  return [
    ...versus(levels, 'squeeze-2t', 'zstd:6', 'producer records/s vs kcat, zstd:6, compression pool of 2 threads'),
    ...versus(lz4, 'squeeze', 'lz4:1', 'lz4 producer records/s vs kcat')
  ]
}

/** The audit's scale target: the whole pass within 4 minutes and 600 MB of peak RSS. */
function auditTargets(audit: AuditScaleResult | undefined): Target[] {
  if (audit === undefined) return []
  const where = `${audit.smallTopics} x ${audit.smallMiB[0]}-${audit.smallMiB[1]} MiB + ${audit.largeTopics} x ${audit.largeMiB} MiB, sample ${audit.sample}`
  return [
    {
      name: `audit wall seconds (${where})`,
      value: audit.wallSeconds,
      threshold: '<= 240',
      met: audit.wallSeconds <= 240
    },
    { name: `audit peak RSS MB (${where})`, value: audit.maxRssMb, threshold: '<= 600', met: audit.maxRssMb <= 600 }
  ]
}

/**
 * The shipper's: no line lost across SIGKILLs, none twice with --exactly-once, and positions costing at most 5% of
 * the single-file path's rate.
 */
function shipperTargets(restart: RestartResult | undefined, positions: PositionsResult | undefined): Target[] {
  const targets: Target[] = []
  for (const r of restart?.rows.filter((x) => x.mode !== 'rsyslog imfile') ?? []) {
    const exactly = r.mode === 'squeeze --exactly-once'
    const value = exactly ? r.lost + r.duplicated : r.lost
    const name = `restart, ${r.kills} SIGKILLs: ${r.mode} lines ${exactly ? 'lost or duplicated' : 'lost'}`
    targets.push({ name, value, threshold: '= 0', met: value === 0 })
  }
  for (const kind of new Set(positions?.rows.map((r) => r.kind) ?? [])) {
    const value = positionsRatio(positions as PositionsResult, kind)
    const name = `shipping lines/s, file set with read positions (--no-source-header) vs single file without (${kind})`
    targets.push({ name, value, threshold: '>= 0.95x', met: value >= 0.95 })
  }
  return targets
}

async function main(): Promise<void> {
  const all = [
    'ceiling',
    'producer',
    'levels',
    'lz4',
    'keeping-up',
    'consumer',
    'copier',
    'decode',
    'parse',
    'e2e',
    'restart',
    'positions',
    'audit'
  ]
  const wanted = new Set(process.argv.slice(2).length > 0 ? process.argv.slice(2) : all)
  // Before anything is written or started: a peer that cannot load fails the run now, not after an hour.
  const librdkafkaConfluent = wanted.has('producer') ? confluentPeer() : null
  const started = Date.now()
  const load = new LoadSampler()
  const commit = buildCommit()
  let broker = 'none (no section needed one)'
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-bench-'))
  const inputs: InputFiles[] = inputsFor(wanted).map((kind) =>
    writeInputs(
      dir,
      kind,
      kind === 'corpus' ? envInt('BENCH_CORPUS_RECORDS', 200_000) : envInt('BENCH_HTTP_RECORDS', 100_000)
    )
  )
  const input = (kind: InputKind): InputFiles => {
    const found = inputs.find((i) => i.kind === kind)
    if (found === undefined) throw new Error(`no ${kind} input written for sections ${[...wanted].join(', ')}`)
    return found
  }
  const meta = {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    runs: benchRuns(),
    partitions: PARTITIONS,
    lingerMs: LINGER_MS,
    batchBytes: BATCH_BYTES,
    librdkafkaConfluent,
    env: benchEnv(),
    inputs: inputs.map((i) => ({ kind: i.kind, records: i.records, valueBytes: i.valueBytes }))
  }
  process.stdout.write(
    `squeeze benchmarks ${meta.date}: ${meta.cpus} cores (${meta.cpuModel}), ${meta.runs} runs per figure (medians), ${PARTITIONS} partitions, linger.ms=${LINGER_MS}, batch.size=${BATCH_BYTES}\n`
  )
  if (inputs.length > 0)
    process.stdout.write(
      `inputs: ${inputs.map((i) => `${i.kind} ${i.records} records, ${(i.valueBytes / 1e6).toFixed(1)} MB of values`).join('; ')}\n`
    )

  let ceilings: CeilingRow[] = []
  let producer: ProducerRow[] = []
  let levels: ProducerRow[] = []
  let lz4: ProducerRow[] = []
  let consumer: ConsumerRow[] = []
  let copier: CopierRow | undefined
  let copierSpeedup: number | undefined
  let decode: { ratio: number; runs: number[] } | undefined
  let parse: ParseRates | undefined
  let e2e: EndToEndResult | undefined
  let keepingUp: KeepingUpResult | undefined
  let audit: AuditScaleResult | undefined
  let restart: RestartResult | undefined
  let positions: PositionsResult | undefined
  const javaRatios = new Map<string, number>()
  try {
    if (wanted.has('ceiling') || wanted.has('producer'))
      await attempt('ceiling', async () => {
        ceilings = inputs.flatMap((i) => codecCeiling(i.kind, readLengthPrefixed(i.lengthPrefixed), BATCH_BYTES, dir))
        section('Codec ceiling (same batches, codec alone)', ceilingTable(ceilings))
        writeJson('bench-codec-ceiling.json', { meta, rows: ceilings })
      })
    if (wanted.has('parse'))
      await attempt('parse', async () => {
        parse = parseRates()
        section('Parsing and encoding, one core (bench/parse.ts)', parseTable(parse))
        writeJson('bench-parse.json', { meta, ...parse })
      })
    const needsBroker = all.filter((s) => !['ceiling', 'decode', 'parse'].includes(s)).some((s) => wanted.has(s))
    const kafka = needsBroker ? await openBenchKafka() : undefined
    if (kafka !== undefined)
      broker = kafka.kind === 'jvm' ? `the embedded Kafka JVM (${kafka.brokers})` : `${kafka.kind} (${kafka.brokers})`
    try {
      if (kafka !== undefined && wanted.has('producer'))
        await attempt('producer', async () => {
          producer = await producerBench(kafka, inputs, ceilings, log)
          const corpus = input('corpus')
          const javaOrdered: Array<{ target: string; ratio: number; meanBatchKb: number; batches: number }> = []
          for (const spec of [
            { codec: 'zstd' as const, level: 3 },
            { codec: 'lz4' as const, level: 1 }
          ]) {
            const j = await javaOrderedRatio(kafka, corpus, spec)
            javaRatios.set(`corpus|${spec.codec}:${spec.level}`, j.ratio)
            javaOrdered.push({ target: `${spec.codec}:${spec.level}`, ...j })
          }
          const squeezeCompress = producer
            .filter((r) => r.peer === 'squeeze' && r.compressMBps !== undefined)
            .map((r) => compressionPathNote(r, ceilingFor(ceilings, r.input, r.target)))
          section(
            'Producer (medians; squeeze/peer ratios; "vs lib ceiling" = input MB/s over the in-process codec MB/s per core)',
            [
              producerTable(producer, ceilings),
              '',
              `Java producer in file order (ConsoleProducer, corpus, for the stored-ratio target): ${javaOrdered.map((j) => `${j.target} ratio ${j.ratio.toFixed(2)} (${j.batches} batches, ${j.meanBatchKb.toFixed(0)} KB each)`).join('; ')}.`,
              '',
              `squeeze's compression path (records MB per CPU s of sealing: the compression threads' CPU per batch, hand-off included, or the event loop's over an inline compress call), against the library alone on the same batches (each run's stored batches, read back and compressed again in this process right after the run; median of per-run ratios), and against the ceiling section's batches: ${squeezeCompress.join('; ')}.`
            ].join('\n')
          )
          writeJson('bench-producer.json', { meta, rows: producer, javaOrdered })
        })
      if (kafka !== undefined && wanted.has('levels'))
        await attempt('levels', async () => {
          levels = await producerBench(kafka, inputs, ceilings, log, {
            targets: LEVEL_TARGETS,
            peers: ['squeeze-1t', 'squeeze-2t', 'kcat', 'java-perf']
          })
          section(
            "Producer at high zstd levels: squeeze's compression pool (-X squeeze.compression.threads=1, 2) vs kcat and ProducerPerformance",
            spreadTable(levels, 'kcat')
          )
          writeJson('bench-producer-levels.json', { meta, rows: levels })
        })
      if (kafka !== undefined && wanted.has('lz4'))
        await attempt('lz4', async () => {
          lz4 = await producerBench(kafka, inputs, ceilings, log, {
            targets: [{ codec: 'lz4', level: 1 }],
            peers: ['squeeze', 'kcat'],
            runs: Math.max(5, benchRuns())
          })
          section('lz4 producer vs kcat (at least 5 runs)', spreadTable(lz4, 'kcat'))
          writeJson('bench-producer-lz4.json', { meta, rows: lz4 })
        })
      if (kafka !== undefined && wanted.has('keeping-up'))
        await attempt('keeping-up', async () => {
          keepingUp = await keepingUpBench(kafka, log)
          section(
            `Keeping up (http, ${keepingUp.schedule} records/s for ${keepingUp.stepSeconds} s each; medians and min-max of ${benchRuns()} runs)`,
            keepingUpTable(keepingUp)
          )
          writeJson('bench-keeping-up.json', { meta, result: keepingUp })
        })
      if (kafka !== undefined && (wanted.has('consumer') || wanted.has('copier')))
        await attempt(wanted.has('consumer') ? 'consumer' : 'copier', async () => {
          const http = input('http')
          // The copier needs only the consumer's source topics, not its peers' runs.
          const c = await consumerBench(kafka, http, log, wanted.has('consumer') ? undefined : [])
          if (wanted.has('consumer')) {
            consumer = c.rows
            section(
              `Consumer (http input, ${consumer[0]?.records ?? http.records} records, medians)`,
              consumerTable(consumer, ceilings)
            )
            writeJson('bench-consumer.json', { meta, rows: consumer })
          }
          const source = c.sourceTopics.get('zstd:3')
          if (wanted.has('copier') && source !== undefined)
            await attempt('copier', async () => {
              const rows = await copierBench(kafka, source, log)
              copier = rows[0]
              copierSpeedup = transcodingSpeedup(rows)
              section(
                `Copier (source: http zstd:3, ${copier?.sourceRecords} records, to six targets, medians)`,
                copierTable(rows)
              )
              writeJson('bench-copier.json', { meta, rows })
            })
        })
      if (kafka !== undefined && wanted.has('e2e'))
        await attempt('e2e', async () => {
          e2e = await endToEndBench(kafka, dir, log)
          section(endToEndTitle(e2e), endToEndTable(e2e))
          writeJson('bench-end-to-end.json', { meta, ...e2e })
        })
      if (kafka !== undefined && wanted.has('restart'))
        await attempt('restart', async () => {
          restart = await restartBench(kafka, dir, log)
          section(restartTitle(restart), restartTable(restart))
          writeJson('bench-restart.json', { meta, ...restart })
        })
      if (kafka !== undefined && wanted.has('positions'))
        await attempt('positions', async () => {
          positions = await positionsBench(kafka, dir, log)
          section(positionsTitle(positions), positionsTable(positions))
          writeJson('bench-positions.json', { meta, ...positions })
        })
      if (kafka !== undefined && wanted.has('audit'))
        await attempt('audit', async () => {
          audit = await auditScaleBench(kafka, dir, log)
          section(
            'squeeze audit at cluster scale (bench/audit-scale.ts)',
            `${auditScaleNote(audit)}\n\n${auditScaleTable(audit)}`
          )
          writeJson('bench-audit.json', { meta, ...audit })
        })
      await kafka?.deleteCreatedTopics()
    } finally {
      await kafka?.close()
    }
    if (wanted.has('decode'))
      await attempt('decode', async () => {
        decode = await httpDecodeRatio()
        section(
          'HTTP decode (bench/http-decode.ts)',
          `Cap'n Proto fast reader / JSON.parse records/s: ${decode.ratio.toFixed(2)}x (median of ${decode.runs.length} runs: ${decode.runs.map((r) => r.toFixed(2)).join(', ')})`
        )
      })
    const targets = [
      ...evaluate(producer, javaRatios, ceilings, consumer, copier, decode?.ratio, parse, e2e),
      ...poolAndLz4Targets(levels, lz4),
      ...(keepingUp === undefined ? [] : keepingUpTargets(keepingUp)),
      ...(copierSpeedup === undefined
        ? []
        : [
            {
              name: 'copier source MB/s, source batching vs rebatch (6 targets)',
              value: copierSpeedup,
              threshold: '>= 2.0x',
              met: copierSpeedup >= 2
            }
          ]),
      ...auditTargets(audit),
      ...shipperTargets(restart, positions),
      ...failed.map((f) => ({
        name: `section ${f.name} ran to its end`,
        value: NaN,
        threshold: 'no error',
        met: false
      }))
    ]
    section(
      'Targets',
      targets
        .map(
          (t) =>
            `- [${t.met ? 'x' : ' '}] ${t.name}: ${Number.isFinite(t.value) ? t.value.toFixed(2) : 'n/a'} (target ${t.threshold})`
        )
        .join('\n')
    )
    const seconds = (Date.now() - started) / 1000
    const loadSeen = load.stop()
    writeJson('bench-summary.json', { meta, seconds, load: loadSeen, targets, decode })
    process.stdout.write(
      `\ntotal ${seconds.toFixed(0)} s; 1-minute load average ${loadSeen.min.toFixed(1)}-${loadSeen.max.toFixed(1)} (median ${loadSeen.median.toFixed(1)})\n`
    )
    // Only a run of every section replaces the page: a partial one would drop the other sections' figures. A section
    // that failed stays on the page as such, and the run's exit code says so.
    if (process.argv.length <= 2) {
      writeResultsPage(
        fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url)),
        { commit, runs: benchRuns(), seconds, load: loadSeen, broker, librdkafkaConfluent },
        sections
      )
      log('wrote docs/benchmarks.md')
    }
    if (failed.length > 0) process.exitCode = 1
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
