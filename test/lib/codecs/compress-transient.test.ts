import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, type CodecSpec } from '../../../lib/codecs/index.js'
import { corpusLines } from '../../helpers/corpus.js'

describe('compressTransient: compress() into reused memory', () => {
  const text = Buffer.from(corpusLines('access_apache_semicomplete_2015.log').join('\n'))
  const inputs = [text.subarray(0, 256 * 1024), text.subarray(0, 100), Buffer.alloc(0), text.subarray(1000, 100_000)]
  for (const spec of [
    { codec: 'lz4', level: 1 },
    { codec: 'lz4', level: 9 },
    { codec: 'zstd', level: -3 },
    { codec: 'zstd', level: 3 },
    { codec: 'zstd', level: 9 }
  ] as CodecSpec[]) {
    it(`${spec.codec}:${spec.level} writes what compress() writes, byte for byte, at every size`, () => {
      const codec = createCodec(spec)
      const other = createCodec({ codec: spec.codec, level: spec.level === 1 ? 9 : 1 })
      assert.ok(codec.compressTransient !== undefined)
      for (const input of inputs) {
        const transient = codec.compressTransient(input)
        assert.ok(Buffer.from(transient).equals(codec.compress(input)), `${input.length} bytes`)
        assert.ok(codec.decompress(transient).equals(input))
        // Another level on the same thread shares the memory and the context: each call still gets its own level.
        other.compressTransient?.(input)
        assert.ok(
          Buffer.from(codec.compressTransient(input)).equals(codec.compress(input)),
          `${input.length} bytes after another level`
        )
      }
    })
  }
})

describe('codecs on shared memory', () => {
  const text = Buffer.from(corpusLines('access_apache_semicomplete_2015.log').join('\n')).subarray(0, 300_000)
  // A projection thread compresses its chunk where it lies, in a SharedArrayBuffer: no binding may refuse it.
  for (const spec of [
    { codec: 'gzip', level: 6 },
    { codec: 'snappy', level: null },
    { codec: 'lz4', level: 1 },
    { codec: 'lz4', level: 9 },
    { codec: 'zstd', level: 3 }
  ] as CodecSpec[]) {
    it(`${spec.codec}:${spec.level ?? ''} compresses memory a SharedArrayBuffer backs as it does an ordinary buffer`, () => {
      const shared = Buffer.from(new SharedArrayBuffer(text.length + 64)).subarray(32, 32 + text.length)
      text.copy(shared)
      const codec = createCodec(spec)
      const expected = codec.compress(text)
      assert.ok(codec.compress(shared).equals(expected), 'compress')
      if (codec.compressTransient !== undefined)
        assert.ok(Buffer.from(codec.compressTransient(shared)).equals(expected), 'compressTransient')
      assert.ok(codec.decompress(expected).equals(shared))
    })
  }
})
