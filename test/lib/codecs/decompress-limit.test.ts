import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { CODEC_NAMES, createCodec, type CodecName } from '../../../lib/codecs/index.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { decompressZstd } from '../../../lib/codecs/zstd.js'

const MiB = 1024 * 1024
/** Repetitive enough that every codec shrinks it a lot: a miniature decompression bomb. */
const PLAIN = Buffer.alloc(8 * MiB, 'abcdefgh')

function codec(name: CodecName) {
  return createCodec({ codec: name, level: null })
}

function isOverCap(err: unknown): boolean {
  return (
    err instanceof SqueezeError &&
    err.code === ErrorCodes.CODEC_OUTPUT_LIMIT &&
    err.message.includes('decompression cap')
  )
}

describe('every codec decompresses within its output cap', () => {
  for (const name of CODEC_NAMES) {
    it(`${name}: output at the cap reads, output past it is refused with CODEC_OUTPUT_LIMIT`, () => {
      const c = codec(name)
      const compressed = c.compress(PLAIN)
      assert.ok(c.decompress(compressed, PLAIN.length).equals(PLAIN))
      assert.throws(() => c.decompress(compressed, PLAIN.length - 1), isOverCap)
      assert.throws(() => c.decompress(compressed, MiB), isOverCap)
    })
  }

  it('zstd refuses a frame that declares more than the cap before allocating its output', () => {
    const bomb = codec('zstd').compress(Buffer.alloc(512 * MiB))
    const external = process.memoryUsage().arrayBuffers
    const declared = (err: unknown): boolean =>
      isOverCap(err) && (err as Error).message.includes('declares 536870912 bytes')
    assert.throws(() => codec('zstd').decompress(bomb, 16 * MiB), declared)
    // Nothing near the declared 512 MiB was allocated.
    assert.ok(process.memoryUsage().arrayBuffers - external < 16 * MiB)
  })

  it('zstd stream-decodes a frame that does not state its size, and stops it at the cap', () => {
    type Compressor = { setParameters(p: object): void; compress(b: Uint8Array): Buffer }
    const { Compressor } = createRequire(import.meta.url)('zstd-napi') as { Compressor: new () => Compressor }
    const compressor = new Compressor()
    compressor.setParameters({ contentSizeFlag: false, compressionLevel: 3 })
    const unsized = compressor.compress(PLAIN)
    type Binding = { getFrameContentSize(b: Uint8Array): number | null }
    const { getFrameContentSize } = createRequire(import.meta.url)('zstd-napi/binding') as Binding
    assert.equal(getFrameContentSize(unsized), null, 'the frame header leaves the size out')
    assert.ok(decompressZstd(unsized, PLAIN.length).equals(PLAIN))
    assert.throws(() => decompressZstd(unsized, MiB), isOverCap)
    // Two frames, one sized and one not: read whole.
    const both = Buffer.concat([codec('zstd').compress(PLAIN.subarray(0, MiB)), unsized])
    assert.equal(decompressZstd(both, 16 * MiB).length, MiB + PLAIN.length)
  })

  it('gzip refuses at once when the trailer states more than the cap, and stops inflating at the cap when it lies', () => {
    const gzip = codec('gzip')
    const compressed = gzip.compress(PLAIN)
    const declared = (err: unknown): boolean =>
      isOverCap(err) && (err as Error).message.includes('declares 8388608 bytes')
    assert.throws(() => gzip.decompress(compressed, MiB), declared)
    const lying = Buffer.from(compressed)
    lying.writeUInt32LE(100, lying.length - 4)
    const grows = (err: unknown): boolean => isOverCap(err) && (err as Error).message.includes('grows past')
    assert.throws(() => gzip.decompress(lying, MiB), grows)
  })
})
