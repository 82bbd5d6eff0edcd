import { constants, createGzip } from 'node:zlib'
import { createRequire } from 'node:module'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { NON_IDEMPOTENT, stampProducerState, writeBatchHeader } from '../../lib/protocol/record-batch-builder.js'
import { writeZigzag } from '../../lib/protocol/varint.js'

interface StreamingCCtx {
  setParameter(param: number, value: number): void
  setPledgedSrcSize(size: number): void
  compressStream2(dst: Uint8Array, src: Uint8Array, endOp: number): [remaining: number, produced: number, read: number]
}
const zstd = createRequire(import.meta.url)('zstd-napi/binding') as {
  CCtx: new () => StreamingCCtx
  CParameter: { compressionLevel: number }
  EndDirective: { continue: number; end: number }
}

const CHUNK = Buffer.alloc(1024 * 1024)

/**
 * The records section of a valid batch of `records` records, each holding `valueMiB` MiB of zero bytes, as chunks:
 * the whole section is never in memory at once (each chunk is the same zero-filled MiB).
 */
function* recordsSection(records: number, valueMiB: number): Generator<Buffer> {
  const valueBytes = valueMiB * CHUNK.length
  for (let i = 0; i < records; i++) {
    const fields = Buffer.alloc(32)
    let at = 0
    fields[at++] = 0 // attributes
    at = writeZigzag(fields, at, 0) // timestamp delta
    at = writeZigzag(fields, at, i) // offset delta
    at = writeZigzag(fields, at, -1) // null key
    at = writeZigzag(fields, at, valueBytes)
    const length = Buffer.alloc(8)
    const lengthBytes = writeZigzag(length, 0, at + valueBytes + 1) // the fields, the value, a zero header count
    yield Buffer.concat([length.subarray(0, lengthBytes), fields.subarray(0, at)])
    for (let m = 0; m < valueMiB; m++) yield CHUNK
    yield Buffer.from([0])
  }
}

/** The batch around a compressed records section: header, producer fields and CRC, as squeeze's producer seals one. */
function sealed(codecId: number, compressed: Buffer, records: number): Buffer {
  const out = Buffer.alloc(BATCH.HEADER_BYTES + compressed.length)
  compressed.copy(out, BATCH.HEADER_BYTES)
  const now = Date.now()
  writeBatchHeader(out, { count: records, attributes: codecId, firstTimestamp: now, maxTimestamp: now })
  stampProducerState(out, NON_IDEMPOTENT)
  return out
}

/** Plain bytes a bomb of `records` x `valueMiB` MiB inflates to. */
export function bombPlainBytes(records: number, valueMiB: number): number {
  let total = 0
  for (const chunk of recordsSection(records, valueMiB)) total += chunk.length
  return total
}

/** A zstd batch whose single frame declares its (huge) content size, compressed as a stream. */
export function zstdBomb(records: number, valueMiB: number): Buffer {
  const cctx = new zstd.CCtx()
  cctx.setParameter(zstd.CParameter.compressionLevel, 3)
  cctx.setPledgedSrcSize(bombPlainBytes(records, valueMiB))
  const out: Buffer[] = []
  const dst = Buffer.alloc(256 * 1024)
  const feed = (src: Buffer, endOp: number): void => {
    let at = 0
    for (;;) {
      const [remaining, produced, consumed] = cctx.compressStream2(dst, src.subarray(at), endOp)
      out.push(Buffer.from(dst.subarray(0, produced)))
      at += consumed
      if (endOp === zstd.EndDirective.end ? remaining === 0 : at >= src.length) return
    }
  }
  for (const chunk of recordsSection(records, valueMiB)) feed(chunk, zstd.EndDirective.continue)
  feed(Buffer.alloc(0), zstd.EndDirective.end)
  return sealed(4, Buffer.concat(out), records)
}

/** A gzip batch (one member, level 9), compressed as a stream. */
export async function gzipBomb(records: number, valueMiB: number): Promise<Buffer> {
  const gzip = createGzip({ level: constants.Z_BEST_COMPRESSION })
  const out: Buffer[] = []
  gzip.on('data', (chunk: Buffer) => out.push(chunk))
  const done = new Promise<void>((resolve, reject) => gzip.on('end', resolve).on('error', reject))
  for (const chunk of recordsSection(records, valueMiB)) {
    if (!gzip.write(chunk)) await new Promise((resolve) => gzip.once('drain', resolve))
  }
  gzip.end()
  await done
  return sealed(1, Buffer.concat(out), records)
}
