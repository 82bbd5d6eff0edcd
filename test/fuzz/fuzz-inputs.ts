/** Real inputs the fuzzers start from: fixture lines, the records they encode to, batches and compressed blocks. */
import { createCodec, parseCodecSpec, type Codec } from '../../lib/codecs/index.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../lib/formats/index.js'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { crc32c } from '../../lib/protocol/crc32c.js'
import { buildBatch } from '../../lib/protocol/record-batch-builder.js'
import { kindLines } from '../helpers/corpus.js'

/** Lines spread over the whole file (every n-th), so the seeds cover its variety, not just its first minutes. */
export function realLines(kind: LogKind, count: number): string[] {
  const all = kindLines(kind)
  const step = Math.max(1, Math.floor(all.length / count))
  return all.filter((_, i) => i % step === 0).slice(0, count)
}

/** Seeds for one kind's line parser: its own lines plus a few of every other kind (they must be rejected cleanly). */
export function lineSeeds(kind: LogKind): string[] {
  return [...realLines(kind, 300), ...LOG_KINDS.filter((k) => k !== kind).flatMap((k) => realLines(k, 8))]
}

/** Record values encodeLine produced from real lines. */
export function encodedRecords(kind: LogKind, count: number): Buffer[] {
  const format = formatFor(kind)
  const out: Buffer[] = []
  for (const line of realLines(kind, count * 2)) {
    try {
      out.push(format.encodeLine(line))
    } catch {
      // Real logs hold lines that do not parse; they are not record seeds.
    }
    if (out.length === count) break
  }
  return out
}

export const FUZZ_CODECS = ['none', 'gzip:1', 'snappy', 'lz4:1', 'zstd:3'] as const

export function codecFor(spec: string): Codec {
  return createCodec(parseCodecSpec(spec))
}

/** Small valid batches (1-5 real records of mixed kinds, some keyed, some with headers) and two-batch record sets. */
export function seedBatches(codec: Codec, count: number): Buffer[] {
  const records = LOG_KINDS.flatMap((k) => encodedRecords(k, 12)).map((v) => (v.length > 300 ? v.subarray(0, 300) : v))
  const batches: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const n = 1 + (i % 5)
    const chosen = Array.from({ length: n }, (_, j) => ({
      key: (i + j) % 3 === 0 ? Buffer.from(`host-${j}`) : null,
      value: (i + j) % 11 === 0 ? null : (records[(i * 7 + j) % records.length] as Buffer),
      headers:
        (i + j) % 4 === 0
          ? [
              { key: 'trace', value: Buffer.from(`t${i}`) },
              { key: 'n', value: null }
            ]
          : [],
      timestamp: 1_700_000_000_000 + i * 1000 + j
    }))
    const batch = Buffer.from(buildBatch(chosen, codec, undefined, 1_700_000_000_000).bytes)
    batch.writeBigInt64BE(BigInt(i * 10), BATCH.BASE_OFFSET)
    batches.push(batch)
  }
  const pairs = batches
    .slice(0, Math.floor(count / 4))
    .map((b, i) => Buffer.concat([b, batches[(i + 1) % batches.length] as Buffer]))
  return [...batches, ...pairs]
}

/** A v2 batch header (count 0, valid CRC) around `body`, marked with `codecId`: how a fetched compressed body reaches a codec. */
export function batchAround(codecId: number, body: Uint8Array): Buffer {
  const batch = Buffer.alloc(BATCH.HEADER_BYTES + body.length)
  batch.writeInt32BE(BATCH.HEADER_BYTES - BATCH.LOG_OVERHEAD + body.length, BATCH.LENGTH)
  batch.writeInt8(2, BATCH.MAGIC)
  batch.writeInt16BE(codecId, BATCH.ATTRIBUTES)
  batch.writeInt32BE(-1, BATCH.LAST_OFFSET_DELTA)
  batch.writeBigInt64BE(-1n, BATCH.PRODUCER_ID)
  batch.writeInt16BE(-1, BATCH.PRODUCER_EPOCH)
  batch.writeInt32BE(-1, BATCH.BASE_SEQUENCE)
  batch.set(body, BATCH.HEADER_BYTES)
  fixCrc(batch)
  return batch
}

/** Recomputes the first batch's CRC-32C over what its header says it covers, so mutations reach past the CRC check. */
export function fixCrc(data: Buffer): void {
  if (data.length < BATCH.HEADER_BYTES) return
  const declared = BATCH.LOG_OVERHEAD + data.readInt32BE(BATCH.LENGTH)
  const end = Math.min(data.length, Math.max(declared, BATCH.HEADER_BYTES))
  data.writeUInt32BE(crc32c(data, BATCH.ATTRIBUTES, end), BATCH.CRC)
}
