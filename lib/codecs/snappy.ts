import { createRequire } from 'node:module'
import { DEFAULT_MAX_DECOMPRESSED_BYTES, outputLimitError, type Codec } from './codec.js'

interface SnappyModule {
  compressSync(input: Uint8Array, options: { copyOutputData: true }): Buffer
  uncompressSync(input: Uint8Array, options: { asBuffer: true; copyOutputData: true }): Buffer
}

const snappy = createRequire(import.meta.url)('snappy') as SnappyModule
/**
 * The binding hands its output over as an external buffer by default: memory allocated fresh per call and
 * accounted to V8, which on 32 KiB xerial blocks costs more than the codec itself, most of it system time.
 * Copying into a V8 buffer is several times faster both ways.
 */
const COPY_OUT = { copyOutputData: true } as const
const COPY_OUT_AS_BUFFER = { asBuffer: true, copyOutputData: true } as const

// xerial snappy-java framing, which the Java client writes and expects: a magic header, then
// [int32 compressed length][raw snappy block] chunks of at most 32 KiB of input each.
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00])
const XERIAL_HEADER_BYTES = 16
const XERIAL_BLOCK_BYTES = 32 * 1024

function isXerialFramed(input: Uint8Array): boolean {
  if (input.length < XERIAL_HEADER_BYTES) return false
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (input[i] !== XERIAL_MAGIC[i]) return false
  return true
}

export function compressXerial(input: Uint8Array): Buffer {
  const chunks: Buffer[] = [xerialHeader()]
  for (let start = 0; start < input.length; start += XERIAL_BLOCK_BYTES) {
    const block = snappy.compressSync(
      input.subarray(start, Math.min(start + XERIAL_BLOCK_BYTES, input.length)),
      COPY_OUT
    )
    const length = Buffer.allocUnsafe(4)
    length.writeUInt32BE(block.length, 0)
    chunks.push(length, block)
  }
  return Buffer.concat(chunks)
}

function xerialHeader(): Buffer {
  const header = Buffer.alloc(XERIAL_HEADER_BYTES)
  XERIAL_MAGIC.copy(header, 0)
  header.writeInt32BE(1, 8) // version
  header.writeInt32BE(1, 12) // minimum compatible version
  return header
}

/**
 * Snappy blocks start with their uncompressed length as a varint, and the library allocates that much before
 * it finds out the block is corrupt: 5 bytes can ask for 4 GiB. Snappy expands at most about 21x, so a larger
 * claim is corruption and is refused before any allocation.
 */
function declaredLength(block: Uint8Array): number {
  let declared = 0
  for (let i = 0, shift = 1; i < Math.min(5, block.length); i++, shift *= 128) {
    const byte = block[i] as number
    declared += (byte & 0x7f) * shift
    if ((byte & 0x80) === 0) break
  }
  if (declared > 22 * block.length + 32)
    throw new RangeError(`snappy block declares ${declared} bytes from ${block.length}: corrupt`)
  return declared
}

function uncompressBlock(block: Uint8Array): Buffer {
  return snappy.uncompressSync(block, COPY_OUT_AS_BUFFER)
}

/** The blocks of `input` and the output size they declare together, read before any of them is decompressed. */
function declaredBlocks(input: Uint8Array): { blocks: Uint8Array[]; declared: number } {
  const blocks = [...snappyBlocks(input)]
  let declared = 0
  for (const block of blocks) declared += declaredLength(block)
  return { blocks, declared }
}

/** Each snappy block of xerial-framed input, or the input itself when it is a bare block. */
function* snappyBlocks(input: Uint8Array): Generator<Uint8Array> {
  if (!isXerialFramed(input)) {
    yield input
    return
  }
  const view = Buffer.from(input.buffer, input.byteOffset, input.byteLength)
  let offset = XERIAL_HEADER_BYTES
  while (offset < view.length) {
    if (offset + 4 > view.length) throw new RangeError('truncated xerial snappy chunk header')
    const length = view.readUInt32BE(offset)
    offset += 4
    if (offset + length > view.length) throw new RangeError('truncated xerial snappy chunk')
    yield view.subarray(offset, offset + length)
    offset += length
  }
}

/** Reads both xerial-framed input (Java, librdkafka) and a bare snappy block (kafkajs-snappy, older clients). */
export function decompressSnappy(input: Uint8Array, maxOutputBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  const { blocks: compressed, declared } = declaredBlocks(input)
  if (declared > maxOutputBytes) throw outputLimitError('snappy', declared, maxOutputBytes)
  const blocks = compressed.map(uncompressBlock)
  return blocks.length === 1 ? (blocks[0] as Buffer) : Buffer.concat(blocks)
}

/** decompressSnappy into `output`, block by block: no joined copy of the blocks. -1 when they do not fit. */
export function decompressSnappyInto(input: Uint8Array, output: Buffer): number {
  const { blocks, declared } = declaredBlocks(input)
  if (declared > output.length) return -1
  let at = 0
  for (const block of blocks) {
    const plain = uncompressBlock(block)
    if (at + plain.length > output.length) return -1
    output.set(plain, at)
    at += plain.length
  }
  return at
}

export function createSnappyCodec(): Codec {
  return {
    name: 'snappy',
    id: 2,
    level: null,
    compress: compressXerial,
    decompress: decompressSnappy,
    decompressInto: decompressSnappyInto
  }
}
