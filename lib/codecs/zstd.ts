import { createRequire } from 'node:module'
import type { Codec } from './codec.js'

interface ZstdNapi {
  compress(input: Uint8Array, params?: { compressionLevel?: number }): Buffer
  decompress(input: Uint8Array): Buffer
}

interface ZstdBinding {
  getFrameContentSize(frame: Uint8Array): number | null
  findFrameCompressedSize(frame: Uint8Array): number
  DCtx: new () => { decompress(dst: Uint8Array, src: Uint8Array): number }
}

// zstd-napi rather than @kafkajs/zstd: the latter's cppzst does not build on Node 20, and once patched
// it compressed about half as fast as zstd-napi at level 3 (see README, "Codec libraries").
const require = createRequire(import.meta.url)
const zstd = require('zstd-napi') as ZstdNapi
const binding = require('zstd-napi/binding') as ZstdBinding
let dctx: InstanceType<ZstdBinding['DCtx']> | undefined

/** One frame whose header states its size (squeeze's, and most clients'), straight into `output`; else -1. */
function decompressZstdInto(input: Uint8Array, output: Buffer): number {
  const size = binding.getFrameContentSize(input)
  if (size === null || size > output.length || binding.findFrameCompressedSize(input) !== input.length) return -1
  dctx ??= new binding.DCtx()
  return dctx.decompress(output.subarray(0, size), input)
}

export function createZstdCodec(level: number): Codec {
  const params = { compressionLevel: level }
  return {
    name: 'zstd',
    id: 4,
    level,
    compress: (input) => zstd.compress(input, params),
    decompress: (input) => zstd.decompress(input),
    decompressInto: decompressZstdInto
  }
}
