import { createCodec, parseCodecSpec } from '../lib/codecs/index.js'
import { packCapnp, unpackCapnp } from '../lib/formats/capnp-packing.js'
import { createGenerator } from '../lib/generators/index.js'
import { threadCpuSeconds } from '../lib/metrics/thread-cpu.js'
import { buildBatch } from '../lib/protocol/record-batch-builder.js'
import { readBatch } from '../lib/protocol/record-batch-reader.js'
import type { OutgoingRecord } from '../lib/protocol/record.js'
import { fmt, table, writeJson } from './lib/harness.js'

/**
 * Cap'n Proto's packed encoding against the plain one, before each codec: the same generated HttpRequest records
 * in the same batches (BENCH_PACKING_RECORDS, default 100,000; 1,000 records per batch), stored bytes, and the CPU
 * to pack and compress, and to decompress and unpack, per GiB of the plain records. In memory, no Kafka:
 *   node dist/bench/capnp-packing.js [out.json]
 */
const SPECS = ['none', 'gzip:6', 'snappy', 'lz4', 'zstd:1', 'zstd:3', 'zstd:6', 'zstd:9']
const PER_BATCH = 1000
const GIB = 1024 ** 3

interface Cell {
  storedBytes: number
  writeCpuSeconds: number
  readCpuSeconds: number
}

function measure(batches: readonly OutgoingRecord[][], spec: string, packed: boolean): Cell {
  const codec = createCodec(parseCodecSpec(spec))
  const cell: Cell = { storedBytes: 0, writeCpuSeconds: 0, readCpuSeconds: 0 }
  for (const records of batches) {
    let t0 = threadCpuSeconds()
    const values = packed ? records.map((r) => ({ ...r, value: packCapnp(r.value as Buffer) })) : records
    const sealed = buildBatch(values, codec, undefined, 0)
    cell.writeCpuSeconds += threadCpuSeconds() - t0
    cell.storedBytes += sealed.bytes.length
    t0 = threadCpuSeconds()
    let sink = 0
    readBatch(sealed.bytes, { verifyCrc: false }).forEachValue((body, start, end) => {
      sink += packed ? unpackCapnp(body.subarray(start, end)).length : end - start
    })
    cell.readCpuSeconds += threadCpuSeconds() - t0
    if (sink === 0) throw new Error('nothing read back')
  }
  return cell
}

function main(): void {
  const count = Number(process.env.BENCH_PACKING_RECORDS ?? 100_000)
  const generator = createGenerator('http', { seed: 35 })
  const batches: OutgoingRecord[][] = []
  let plainBytes = 0
  for (let at = 0; at < count; at += PER_BATCH) {
    batches.push(
      Array.from({ length: Math.min(PER_BATCH, count - at) }, () => {
        const r = generator.next()
        plainBytes += r.value.length
        return { key: r.key, value: r.value, headers: [], timestamp: r.timestampMs }
      })
    )
  }
  const rows = SPECS.map((spec) => {
    // Once untimed first, so neither form pays the codec's warm-up.
    measure(batches.slice(0, 5), spec, false)
    measure(batches.slice(0, 5), spec, true)
    const plain = measure(batches, spec, false)
    const packed = measure(batches, spec, true)
    return { spec, plain, packed, storedRatio: packed.storedBytes / plain.storedBytes }
  })
  const perGiB = (seconds: number): string => fmt(seconds / (plainBytes / GIB), 2)
  console.log(
    `Cap'n Proto packed vs plain, ${count} http records (${fmt(plainBytes / 1e6, 1)} MB of values), ` +
      `${PER_BATCH} per batch; CPU s per GiB of plain values`
  )
  const headers = [
    'codec',
    'plain stored',
    'packed stored',
    'packed / plain',
    'plain write CPU',
    'packed write CPU',
    'plain read CPU',
    'packed read CPU'
  ]
  console.log(
    table(
      headers,
      rows.map((r) => [
        r.spec,
        fmt(r.plain.storedBytes),
        fmt(r.packed.storedBytes),
        r.storedRatio.toFixed(3),
        perGiB(r.plain.writeCpuSeconds),
        perGiB(r.packed.writeCpuSeconds),
        perGiB(r.plain.readCpuSeconds),
        perGiB(r.packed.readCpuSeconds)
      ])
    )
  )
  const out = process.argv[2] ?? 'bench-capnp-packing.json'
  writeJson(out, { records: count, plainValueBytes: plainBytes, perBatch: PER_BATCH, rows })
}

main()
