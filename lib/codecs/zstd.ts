import { createRequire } from 'node:module'
import { DEFAULT_MAX_DECOMPRESSED_BYTES, outputLimitError, type Codec } from './codec.js'

interface ZstdDCtx {
  decompress(dst: Uint8Array, src: Uint8Array): number
  decompressStream(dst: Uint8Array, src: Uint8Array): [remaining: number, produced: number, consumed: number]
  setParameter(param: number, value: number): void
  reset(directive: number): void
}

interface ZstdBinding {
  compressBound(length: number): number
  CParameter: { compressionLevel: number }
  CCtx: new () => {
    setParameter(param: number, value: number): void
    compress2(dst: Uint8Array, src: Uint8Array): number
  }
  getFrameContentSize(frame: Uint8Array): number | null
  findFrameCompressedSize(frame: Uint8Array): number
  DCtx: new () => ZstdDCtx
  DParameter: { windowLogMax: number }
  ResetDirective: { sessionOnly: number }
}

// zstd-napi rather than @kafkajs/zstd: the latter's cppzst does not build on every supported Node, and compresses
// more slowly (docs/design.md, "Codec libraries"). Only its native binding loads: the package's index pulls in its
// streaming classes and node:assert, which every compression thread would load at boot and never use.
const require = createRequire(import.meta.url)
const binding = require('zstd-napi/binding') as ZstdBinding
let dctx: ZstdDCtx | undefined
// One context and output scratch per thread, as zstd-napi's compress() shares one context: compress() copies its
// output out at its size, as the library's does; compressTransient returns the scratch's view and saves the copy.
let cctx: InstanceType<ZstdBinding['CCtx']> | undefined
let scratch = Buffer.alloc(0)

/** What zstd-napi's compress(input, { compressionLevel }) writes, into this thread's reused scratch. */
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

/** Output chunk of the streaming decoder, for frames that do not state their size. */
const STREAM_CHUNK_BYTES = 256 * 1024
/** zstd's own default window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT): the most a streaming decoder's window may take. */
const WINDOW_LOG_LIMIT = 27

/**
 * Every frame of `input` decompressed, within `maxOutputBytes`. Frames whose headers state their sizes (squeeze's,
 * and most clients') are checked against the cap before anything is allocated, then decompressed in one call;
 * otherwise the input is stream-decoded chunk by chunk and refused as soon as the output passes the cap.
 */
export function decompressZstd(input: Uint8Array, maxOutputBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  let declared = 0
  for (let at = 0; at < input.length;) {
    const frame = input.subarray(at)
    const size = binding.getFrameContentSize(frame)
    if (size === null) return decompressZstdStream(input, maxOutputBytes)
    declared += size
    if (declared > maxOutputBytes) throw outputLimitError('zstd', declared, maxOutputBytes)
    at += binding.findFrameCompressedSize(frame)
  }
  dctx ??= new binding.DCtx()
  const out = Buffer.allocUnsafe(declared)
  return out.subarray(0, dctx.decompress(out, input))
}

function decompressZstdStream(input: Uint8Array, maxOutputBytes: number): Buffer {
  const stream = new binding.DCtx()
  // The window is memory the decoder holds on top of the output: no larger than the output may be.
  const windowLog = Math.max(10, Math.min(WINDOW_LOG_LIMIT, Math.ceil(Math.log2(Math.max(1, maxOutputBytes)))))
  stream.setParameter(binding.DParameter.windowLogMax, windowLog)
  const chunks: Buffer[] = []
  let total = 0
  let at = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(STREAM_CHUNK_BYTES, maxOutputBytes - total + 1))
    const [remaining, produced, consumed] = decodeStep(stream, chunk, input.subarray(at), maxOutputBytes)
    at += consumed
    total += produced
    if (total > maxOutputBytes) throw outputLimitError('zstd', 0, maxOutputBytes)
    if (produced > 0) chunks.push(chunk.subarray(0, produced))
    if (at >= input.length && remaining === 0) break
    if (produced === 0 && consumed === 0) throw new RangeError('zstd input ends inside a frame')
  }
  return Buffer.concat(chunks, total)
}

/** One decompressStream call; a window over the limit set from the cap is the cap's refusal, not corruption. */
function decodeStep(
  stream: ZstdDCtx,
  chunk: Buffer,
  input: Uint8Array,
  maxOutputBytes: number
): ReturnType<ZstdDCtx['decompressStream']> {
  try {
    return stream.decompressStream(chunk, input)
  } catch (err) {
    if (err instanceof Error && /too much memory/.test(err.message)) throw outputLimitError('zstd', 0, maxOutputBytes)
    throw err
  }
}

export function createZstdCodec(level: number): Codec {
  return {
    name: 'zstd',
    id: 4,
    level,
    compress: (input) => Buffer.from(compressZstdTransient(input, level)),
    compressTransient: (input) => compressZstdTransient(input, level),
    decompress: decompressZstd,
    decompressInto: decompressZstdInto
  }
}
