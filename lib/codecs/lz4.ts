import { createRequire } from 'node:module'
import { DEFAULT_MAX_DECOMPRESSED_BYTES, outputLimitError, type Codec } from './codec.js'

interface Lz4Bindings {
  frameBound(inputLength: number): number
  compressFrame(input: Uint8Array, output: Uint8Array, level: number): number
  decompressBlock(block: Uint8Array, output: Uint8Array): number
}

const require = createRequire(import.meta.url)
// squeeze's own N-API binding (native/squeeze-lz4, LZ4 1.9.4 vendored): one build loads on every Node version,
// and a whole batch's frame is written in one native call with the compression state reused across its blocks
// (the nan `lz4` package it replaces cleared a fresh state per 64 KiB block, well below the lz4 CLI's speed).
const bindings = require('squeeze-lz4') as Lz4Bindings

const MAGIC = 0x184d2204
const FLG_VERSION_01 = 0x40
const FLG_BLOCK_INDEPENDENT = 0x20
const FLG_BLOCK_CHECKSUM = 0x10
const FLG_CONTENT_SIZE = 0x08
const FLG_CONTENT_CHECKSUM = 0x04
const FLG_DICT_ID = 0x01
const UNCOMPRESSED_BLOCK = 0x80000000
const BLOCK_MAX_SIZES: Readonly<Record<number, number>> = { 4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20 }

/**
 * LZ4 frames the way Kafka's KafkaLZ4BlockOutputStream writes them: independent 64 KiB blocks, no content
 * checksum, so stored ratios compare with the Java producer's. Level 1 is the fast compressor (what librdkafka
 * and the Java producer write by default); 2..17 are LZ4HC at that level, which the C library caps at 12.
 */
export function compressLz4Frame(input: Uint8Array, level: number): Buffer {
  const out = Buffer.allocUnsafe(bindings.frameBound(input.length))
  return out.subarray(0, bindings.compressFrame(input, out, level))
}

// Grown to the largest frame bound seen; one per thread (each worker thread loads its own copy of this module).
let scratch = Buffer.alloc(0)

/** compressLz4Frame into this thread's reused scratch; the view is overwritten by the next call. */
export function compressLz4FrameTransient(input: Uint8Array, level: number): Uint8Array {
  const bound = bindings.frameBound(input.length)
  if (scratch.length < bound) scratch = Buffer.allocUnsafeSlow(bound)
  return scratch.subarray(0, bindings.compressFrame(input, scratch, level))
}

/**
 * One frame decompressed within `maxOutputBytes`: into a buffer of the frame's worst case, or of the cap when that
 * is smaller (Kafka's frames fill their blocks, so the worst case is close to the real size); a block that does
 * not fit what is left of the cap is refused.
 */
export function decompressLz4Frame(input: Uint8Array, maxOutputBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  const frame = readFrameLayout(input)
  const out = Buffer.allocUnsafe(Math.min(frame.bound, maxOutputBytes))
  return out.subarray(0, decodeBlocks(frame, out))
}

/** decompressLz4Frame into `output`; -1 when the frame's worst case does not fit there. */
export function decompressLz4FrameInto(input: Uint8Array, output: Buffer): number {
  const frame = readFrameLayout(input)
  return frame.bound > output.length ? -1 : decodeBlocks(frame, output)
}

interface FrameLayout {
  readonly view: Buffer
  readonly first: number
  readonly blocks: number
  readonly bound: number
  readonly maxBlock: number
  readonly blockChecksum: number
}

/**
 * Checks a frame's header and block headers, and bounds its output (block size, and at most ~255 bytes per
 * compressed byte, so a hostile frame cannot ask for much), so blocks decompress straight into one buffer.
 */
function readFrameLayout(input: Uint8Array): FrameLayout {
  const view = Buffer.from(input.buffer, input.byteOffset, input.byteLength)
  if (view.length < 7 || view.readUInt32LE(0) !== MAGIC) throw new RangeError('not an LZ4 frame (bad magic)')
  const flg = view[4] as number
  if ((flg & 0xc0) !== FLG_VERSION_01)
    throw new RangeError(`unsupported LZ4 frame version in FLG 0x${flg.toString(16)}`)
  if ((flg & FLG_BLOCK_INDEPENDENT) === 0)
    throw new RangeError('LZ4 frames with linked blocks are not supported (Kafka clients write independent blocks)')
  if ((flg & FLG_DICT_ID) !== 0) throw new RangeError('LZ4 frames with a dictionary are not supported')
  const maxBlock = BLOCK_MAX_SIZES[((view[5] as number) >> 4) & 0x7]
  if (maxBlock === undefined) throw new RangeError('LZ4 frame declares an invalid block size')
  const first = 6 + ((flg & FLG_CONTENT_SIZE) !== 0 ? 8 : 0) + 1
  const blockChecksum = (flg & FLG_BLOCK_CHECKSUM) !== 0 ? 4 : 0
  let blocks = 0
  let bound = 0
  let at = first
  for (;;) {
    if (at + 4 > view.length) throw new RangeError('LZ4 frame truncated before its end mark')
    const word = view.readUInt32LE(at)
    at += 4
    if (word === 0) break
    const size = word & ~UNCOMPRESSED_BLOCK & 0x7fffffff
    if (size > maxBlock || at + size + blockChecksum > view.length)
      throw new RangeError('LZ4 block runs past the frame')
    at += size + blockChecksum
    bound += (word & UNCOMPRESSED_BLOCK) !== 0 ? size : Math.min(maxBlock, size * 255 + 255)
    blocks++
  }
  if ((flg & FLG_CONTENT_CHECKSUM) !== 0 && at + 4 > view.length)
    throw new RangeError('LZ4 frame truncated before its checksum')
  return { view, first, blocks, bound, maxBlock, blockChecksum }
}

function decodeBlocks(frame: FrameLayout, out: Buffer): number {
  const { view, maxBlock, blockChecksum } = frame
  let written = 0
  let at = frame.first
  for (let b = 0; b < frame.blocks; b++) {
    const word = view.readUInt32LE(at)
    at += 4
    const size = word & ~UNCOMPRESSED_BLOCK & 0x7fffffff
    const block = view.subarray(at, at + size)
    const room = out.length - written
    if ((word & UNCOMPRESSED_BLOCK) !== 0) {
      if (size > room) throw outputLimitError('lz4', 0, out.length)
      out.set(block, written)
      written += size
    } else if (Math.min(maxBlock, size * 255 + 255) <= room) {
      const n = bindings.decompressBlock(block, out.subarray(written, Math.min(frame.bound, written + maxBlock)))
      if (n < 0) throw new RangeError(`corrupt LZ4 block at byte ${at}`)
      written += n
    } else {
      written += decodeLastBlock(block, out, written, maxBlock)
    }
    at += size + blockChecksum
  }
  return written
}

/** A block that may not fit what is left of the cap: decoded aside, then refused if it does not fit. */
function decodeLastBlock(block: Uint8Array, out: Buffer, written: number, maxBlock: number): number {
  const aside = Buffer.allocUnsafe(maxBlock)
  const n = bindings.decompressBlock(block, aside)
  if (n < 0) throw new RangeError(`corrupt LZ4 block at byte ${written}`)
  if (written + n > out.length) throw outputLimitError('lz4', 0, out.length)
  aside.copy(out, written, 0, n)
  return n
}

export function createLz4Codec(level: number): Codec {
  return {
    name: 'lz4',
    id: 3,
    level,
    compress: (input) => compressLz4Frame(input, level),
    compressTransient: (input) => compressLz4FrameTransient(input, level),
    decompress: decompressLz4Frame,
    decompressInto: decompressLz4FrameInto
  }
}
