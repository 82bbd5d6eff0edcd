import zstd from 'zstd-napi'
import { compressLz4Frame } from '../../../lib/codecs/lz4.js'

/**
 * Stand-in for Kafka's record batch body: each record framed as varint(length) + value, records
 * concatenated into ~1 MB chunks, each chunk compressed on its own (as a producer compresses each
 * batch). Ratio = total uncompressed bytes / total compressed bytes.
 */
export const BATCH_BYTES = 1 << 20

export type RatioCodec = 'zstd-3' | 'lz4'

function varint(n: number): Buffer {
  const out: number[] = []
  let v = n
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80)
    v >>>= 7
  }
  out.push(v)
  return Buffer.from(out)
}

export function frameIntoBatches(values: readonly Buffer[], batchBytes = BATCH_BYTES): Buffer[] {
  const batches: Buffer[] = []
  let parts: Buffer[] = []
  let size = 0
  for (const value of values) {
    const head = varint(value.length)
    if (size > 0 && size + head.length + value.length > batchBytes) {
      batches.push(Buffer.concat(parts, size))
      parts = []
      size = 0
    }
    parts.push(head, value)
    size += head.length + value.length
  }
  if (size > 0) batches.push(Buffer.concat(parts, size))
  return batches
}

function compress(codec: RatioCodec, chunk: Buffer): Buffer {
  return codec === 'zstd-3' ? zstd.compress(chunk, { compressionLevel: 3 }) : compressLz4Frame(chunk, 1)
}

export function compressionRatio(values: readonly Buffer[], codec: RatioCodec): number {
  let raw = 0
  let packed = 0
  for (const batch of frameIntoBatches(values)) {
    raw += batch.length
    packed += compress(codec, batch).length
  }
  return packed === 0 ? 1 : raw / packed
}
