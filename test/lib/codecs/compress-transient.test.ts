import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createCodec, type CodecSpec } from '../../../lib/codecs/index.js'
import { corpusLines } from '../../helpers/corpus.js'

describe('compressTransient: compress() into reused memory', () => {
  const text = Buffer.from(corpusLines('access_apache_semicomplete_2015.log').join('\n'))
  const inputs = [text.subarray(0, 256 * 1024), text.subarray(0, 100), Buffer.alloc(0), text.subarray(1000, 100_000)]
  for (const spec of [{ codec: 'lz4', level: 1 }, { codec: 'lz4', level: 9 }, { codec: 'zstd', level: -3 }, { codec: 'zstd', level: 3 }, { codec: 'zstd', level: 9 }] as CodecSpec[]) {
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
        assert.ok(Buffer.from(codec.compressTransient(input)).equals(codec.compress(input)), `${input.length} bytes after another level`)
      }
    })
  }
})
