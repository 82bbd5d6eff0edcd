import { createRequire } from 'node:module'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBatches } from '../lib/sweep/codec-sweep.js'
import { compressLz4Frame, compressLz4FrameTransient, decompressLz4Frame } from '../lib/codecs/lz4.js'
import { BATCH_BYTES } from './producer.js'
import { envInt, fmt, median, must, runChild, table, writeJson } from './lib/harness.js'
import { corpusValues, httpValues, type InputKind } from './lib/inputs.js'
import { PEERS_DIR } from './lib/peers.js'

/**
 * lz4 level 1 (LZ4's fast compressor) on the batches the producer seals (batch.size of uncompressed records
 * sections), each compressed into a Kafka LZ4 frame (independent 64 KiB blocks, no checksums):
 *  - squeeze's codec (native/squeeze-lz4: N-API, one native call per batch), as the producer seals a batch: into
 *    memory the thread reuses (compressTransient), and through compress(), a fresh output buffer per batch;
 *  - the nan `lz4` package's block functions with a frame loop in JS, as squeeze used it before;
 *  - lz4-napi's frame encoder (lz4_flex), without checksums (it writes 256 KiB blocks and has no option for 64 KiB);
 *  - the `lz4` CLI on a file of the same batches: its own in-memory benchmark (`-b1 -B4`: 64 KiB blocks, wall
 *    clock, best loop), and real `lz4 -1 -B4 -BI --no-frame-crc` runs of the file (process CPU, GNU time), in
 *    Kafka's 64 KiB blocks and in the CLI's default 4 MiB blocks (`-B7`: not Kafka's frame, for comparison).
 * In-process figures are MB of batch bytes per CPU second of this thread, median and range over BENCH_RUNS rounds,
 * candidates interleaved in each round so load spikes on the shared machine spread over all of them.
 *   bash scripts/bench-lz4.sh     (installs the peers, builds, runs this; writes bench-lz4-speed.json)
 */

interface Candidate {
  readonly name: string
  readonly compress: (batch: Buffer) => Buffer
}

interface Row {
  readonly input: InputKind
  readonly candidate: string
  readonly ratio: number
  readonly medianMBps: number
  readonly minMBps: number
  readonly maxMBps: number
}

const RUNS = envInt('BENCH_RUNS', 5)
const MIN_CPU_SECONDS = 0.5
const peerRequire = createRequire(join(PEERS_DIR, 'lz4', 'package.json'))

function nanLz4Candidate(): Candidate {
  const b = peerRequire('lz4/build/Release/lz4') as {
    compressBound(n: number): number
    compress(i: Uint8Array, o: Uint8Array): number
  }
  const block = 64 * 1024
  const bound = b.compressBound(block)
  const header = compressLz4Frame(Buffer.alloc(0), 1).subarray(0, 7)
  return {
    name: 'lz4 0.6.5 (nan, previous squeeze path)',
    compress: (input) => {
      const out = Buffer.allocUnsafe(7 + Math.ceil(input.length / block) * (4 + bound) + 4)
      header.copy(out)
      let at = 7
      for (let start = 0; start < input.length; start += block) {
        const chunk = input.subarray(start, Math.min(start + block, input.length))
        const n = b.compress(chunk, out.subarray(at + 4, at + 4 + bound))
        if (n > 0 && n < chunk.length) {
          out.writeUInt32LE(n, at)
          at += 4 + n
        } else {
          out.writeUInt32LE((chunk.length | 0x80000000) >>> 0, at)
          chunk.copy(out, at + 4)
          at += 4 + chunk.length
        }
      }
      out.writeUInt32LE(0, at)
      return out.subarray(0, at + 4)
    }
  }
}

function lz4NapiCandidate(): Candidate {
  const napi = peerRequire('lz4-napi') as {
    compressFrameSync(data: Buffer, options?: { contentChecksum?: boolean; blockChecksums?: boolean }): Buffer
  }
  return {
    name: 'lz4-napi 2.10.0 (lz4_flex)',
    compress: (input) => napi.compressFrameSync(input, { contentChecksum: false, blockChecksums: false })
  }
}

/** Peers that are not installed (run without scripts/bench-lz4.sh) are left out, and said so. */
function candidates(): Candidate[] {
  const all: Candidate[] = [
    {
      name: 'squeeze (N-API, native/squeeze-lz4), reused output (as the producer seals)',
      compress: (b) => {
        const frame = compressLz4FrameTransient(b, 1)
        return Buffer.from(frame.buffer, frame.byteOffset, frame.length)
      }
    },
    { name: 'squeeze compress(): a fresh output buffer per batch', compress: (b) => compressLz4Frame(b, 1) }
  ]
  for (const make of [nanLz4Candidate, lz4NapiCandidate]) {
    try {
      all.push(make())
    } catch (err) {
      process.stderr.write(
        `lz4-speed: a peer is not installed (${(err as Error).message.split('\n')[0]}); run scripts/bench-lz4.sh\n`
      )
    }
  }
  return all
}

function cpuSeconds(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/** Passes over all batches until MIN_CPU_SECONDS of CPU are spent; MB (10^6 bytes) of input per CPU second. */
function measure(c: Candidate, batches: readonly Buffer[], bytes: number): number {
  let passes = 0
  const start = cpuSeconds()
  let spent: number
  do {
    for (const b of batches) c.compress(b)
    passes++
    spent = cpuSeconds() - start
  } while (spent < MIN_CPU_SECONDS)
  return (passes * bytes) / 1e6 / spent
}

/**
 * Every frame must read back byte for byte, or the speed means nothing; its block size (BD) is reported, since
 * Kafka's clients write 64 KiB blocks and a peer that cannot is no drop-in replacement even if it is fast.
 */
function checkFrames(c: Candidate, batches: readonly Buffer[]): { ratio: number; blockKiB: number } | undefined {
  let packed = 0
  let blockKiB = 0
  for (const b of batches) {
    const frame = c.compress(b)
    if (!decompressLz4Frame(frame).equals(b)) return undefined
    blockKiB = 64 << (2 * (((frame[5] ?? 0) >> 4) - 4))
    packed += frame.length
  }
  return { ratio: batches.reduce((s, b) => s + b.length, 0) / packed, blockKiB }
}

async function cliRows(input: InputKind, batches: readonly Buffer[], bytes: number, dir: string): Promise<Row[]> {
  // Repeated so a run takes a few tenths of a CPU second: GNU time counts in 10 ms steps.
  const copies = Math.max(1, Math.ceil(200e6 / bytes))
  const file = join(dir, `${input}-batches.bin`)
  writeFileSync(file, Buffer.concat(Array.from({ length: copies }, () => batches).flat()))
  const bench: number[] = []
  const run: number[] = []
  const defaultBlocks: number[] = []
  let ratio = NaN
  for (let r = 0; r < RUNS; r++) {
    // lz4 prints its benchmark result on stderr, after \r progress lines.
    const b = must(await runChild('lz4', ['-b1', '-B4', '-i1', file]), 'lz4 -b1')
    const m = [...b.stderr.matchAll(/\(x?\s*([\d.]+)\)\s*,\s*([\d.]+)\s*MB\/s/g)].at(-1)
    if (m === undefined) throw new Error(`lz4 -b1: no result in ${b.stderr.slice(-200)}`)
    ratio = Number(m[1])
    bench.push(Number(m[2]))
    const c = must(
      await runChild('lz4', ['-1', '-B4', '-BI', '--no-frame-crc', '-f', '-q', '-c', file], { dropStdout: true }),
      'lz4 -1'
    )
    run.push((copies * bytes) / 1e6 / c.cpuSeconds)
    const d = must(
      await runChild('lz4', ['-1', '-B7', '-BI', '--no-frame-crc', '-f', '-q', '-c', file], { dropStdout: true }),
      'lz4 -1 -B7'
    )
    defaultBlocks.push((copies * bytes) / 1e6 / d.cpuSeconds)
  }
  const row = (candidate: string, values: number[]): Row => ({
    input,
    candidate,
    ratio,
    medianMBps: median(values),
    minMBps: Math.min(...values),
    maxMBps: Math.max(...values)
  })
  return [
    row('lz4 CLI 1.9.4: -b1 -B4 (its benchmark, wall clock), 64 KiB blocks', bench),
    row('lz4 CLI 1.9.4: -1 -B4 -BI --no-frame-crc (CPU time), 64 KiB blocks', run),
    {
      ...row(
        "lz4 CLI 1.9.4: -1 -B7 -BI --no-frame-crc (CPU time), 4 MiB blocks (its default; not Kafka's frame)",
        defaultBlocks
      ),
      ratio: NaN
    }
  ]
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-lz4-speed-'))
  const rows: Row[] = []
  try {
    for (const input of ['corpus', 'http'] as const) {
      const values =
        input === 'corpus'
          ? corpusValues(envInt('BENCH_CORPUS_RECORDS', 200_000))
          : httpValues(envInt('BENCH_HTTP_RECORDS', 100_000))
      const batches = buildBatches(
        values.map((value) => ({ key: null, value, timestamp: 0 })),
        BATCH_BYTES
      ).sections
      const bytes = batches.reduce((s, b) => s + b.length, 0)
      const kafka = candidates().flatMap((c) => {
        const checked = checkFrames(c, batches)
        if (checked === undefined)
          process.stderr.write(`lz4-speed: ${c.name} writes frames that do not read back; left out\n`)
        return checked === undefined ? [] : [{ c, ...checked }]
      })
      const speeds = new Map(kafka.map(({ c }) => [c.name, [] as number[]]))
      for (let r = 0; r < RUNS; r++) for (const { c } of kafka) speeds.get(c.name)?.push(measure(c, batches, bytes))
      for (const { c, ratio, blockKiB } of kafka) {
        const v = speeds.get(c.name) ?? []
        rows.push({
          input,
          candidate: `${c.name}, ${blockKiB} KiB blocks`,
          ratio,
          medianMBps: median(v),
          minMBps: Math.min(...v),
          maxMBps: Math.max(...v)
        })
      }
      rows.push(...(await cliRows(input, batches, bytes, dir)))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  // The reference is the CLI's CPU time: the in-process figures are CPU time too, while its -b1 benchmark is wall clock.
  const cli = (input: InputKind): Row | undefined =>
    rows.find((r) => r.input === input && r.candidate.includes('CPU time') && r.candidate.includes('-B4'))
  process.stdout.write(`lz4 level 1, ${BATCH_BYTES}-byte batches, ${RUNS} rounds, Node ${process.version}\n`)
  process.stdout.write(
    `${table(
      ['input', 'compressor', 'ratio', 'MB/s median', 'min-max', 'vs lz4 -1 (CPU)'],
      rows.map((r) => [
        r.input,
        r.candidate,
        fmt(r.ratio, 2),
        fmt(r.medianMBps),
        `${fmt(r.minMBps)}-${fmt(r.maxMBps)}`,
        `${(r.medianMBps / (cli(r.input)?.medianMBps ?? NaN)).toFixed(2)}x`
      ])
    )}\n`
  )
  writeJson('bench-lz4-speed.json', { node: process.version, batchBytes: BATCH_BYTES, runs: RUNS, rows })
}

await main()
