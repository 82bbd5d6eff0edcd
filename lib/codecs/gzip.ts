import { gunzipSync, gzipSync } from 'node:zlib'
import { DEFAULT_MAX_DECOMPRESSED_BYTES, outputLimitError, type Codec } from './codec.js'

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
    decompress: decompressGzip
  }
}

/**
 * Inflates one gzip member, refusing output past `maxOutputBytes`: at once when the trailer's size (ISIZE, the size
 * modulo 2^32, so never more than the real size of an intact member) is over it, else when zlib's output reaches it
 * (maxOutputLength stops inflating there, so a trailer that lies costs at most the cap).
 */
export function decompressGzip(input: Uint8Array, maxOutputBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  const isize = trailerSize(input)
  if (isize !== null && isize > maxOutputBytes) throw outputLimitError('gzip', isize, maxOutputBytes)
  try {
    const chunkSize = Math.min(outputChunkBytes(input), Math.max(DEFAULT_CHUNK_BYTES, maxOutputBytes))
    return gunzipSync(input, { chunkSize, maxOutputLength: maxOutputBytes })
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw outputLimitError('gzip', 0, maxOutputBytes)
    throw err
  }
}

/** ISIZE, the last 4 bytes of a gzip member (Kafka clients write one member per batch); null for a shorter input. */
function trailerSize(input: Uint8Array): number | null {
  if (input.length < 18) return null
  return Buffer.from(input.buffer, input.byteOffset, input.byteLength).readUInt32LE(input.length - 4)
}

/**
 * zlib's output chunk for inflating `input`: the size its trailer says, plus a little, so the output comes in one
 * chunk; in zlib's own 16 KiB chunks a large batch inflates several times slower (many chunks, then concatenated).
 * A trailer that lies costs only speed: the output is whatever the data inflates to, and zlib checks its length.
 */
export function outputChunkBytes(input: Uint8Array): number {
  const isize = trailerSize(input)
  if (isize === null) return DEFAULT_CHUNK_BYTES
  return Math.min(MAX_CHUNK_BYTES, Math.max(DEFAULT_CHUNK_BYTES, isize + 64))
}
