import { gunzipSync, gzipSync } from 'node:zlib'
import type { Codec } from './codec.js'

/** node:zlib's own output chunk, and the least this asks for. */
const DEFAULT_CHUNK_BYTES = 16 * 1024
/** The most this asks for on a trailer's word: past it, zlib adds chunks as it needs them. */
const MAX_CHUNK_BYTES = 64 * 1024 * 1024

export function createGzipCodec(level: number): Codec {
  return {
    name: 'gzip',
    id: 1,
    level,
    compress: (input) => gzipSync(input, { level }),
    decompress: (input) => gunzipSync(input, { chunkSize: outputChunkBytes(input) })
  }
}

/**
 * zlib's output chunk for inflating `input`: the size its trailer says (ISIZE, the last 4 bytes of a gzip member;
 * Kafka clients write one member per batch), plus a little, so the output comes in one chunk: in zlib's default
 * 16 KiB chunks a large batch inflates several times slower (many chunks, then concatenated). A trailer that lies costs only speed:
 * the output is whatever the data inflates to, and zlib checks the length against the trailer as before.
 */
export function outputChunkBytes(input: Uint8Array): number {
  if (input.length < 18) return DEFAULT_CHUNK_BYTES
  const isize = Buffer.from(input.buffer, input.byteOffset, input.byteLength).readUInt32LE(input.length - 4)
  return Math.min(MAX_CHUNK_BYTES, Math.max(DEFAULT_CHUNK_BYTES, isize + 64))
}
