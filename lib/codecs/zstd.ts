import { createRequire } from 'node:module'
import type { Codec } from './codec.js'

interface ZstdNapi {
  compress(input: Uint8Array, params?: { compressionLevel?: number }): Buffer
  decompress(input: Uint8Array): Buffer
}

interface ZstdBinding {
  compressBound(length: number): number
  CParameter: { compressionLevel: number }
  CCtx: new () => { setParameter(param: number, value: number): void; compress2(dst: Uint8Array, src: Uint8Array): number }
  getFrameContentSize(frame: Uint8Array): number | null
  findFrameCompressedSize(frame: Uint8Array): number
  DCtx: new () => { decompress(dst: Uint8Array, src: Uint8Array): number }
}

// zstd-napi rather than @kafkajs/zstd: the latter's cppzst does not build on every supported Node, and compresses
// more slowly (docs/design.md, "Codec libraries").
const require = createRequire(import.meta.url)
const zstd = require('zstd-napi') as ZstdNapi
const binding = require('zstd-napi/binding') as ZstdBinding
let dctx: InstanceType<ZstdBinding['DCtx']> | undefined
// One context and output scratch per thread, as zstd-napi's compress() shares one context; its output is a
// fresh buffer per call, which compressTransient saves.
let cctx: InstanceType<ZstdBinding['CCtx']> | undefined
let scratch = Buffer.alloc(0)

/** What zstd.compress(input, { compressionLevel }) writes, into this thread's reused scratch. */
function compressZstdTransient(input: Uint8Array, level: number): Uint8Array {
  cctx ??= new binding.CCtx()
  cctx.setParameter(binding.CParameter.compressionLevel, level)
  const bound = binding.compressBound(input.length)
  if (scratch.length < bound) scratch = Buffer.allocUnsafeSlow(bound)
  return scratch.subarray(0, cctx.compress2(scratch, input))
}

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
    compressTransient: (input) => compressZstdTransient(input, level),
    decompress: (input) => zstd.decompress(input),
    decompressInto: decompressZstdInto
  }
}
