import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { gunzipSync, gzipSync } from 'node:zlib'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { CODEC_NAMES, createCodec, decoderForId, parseCodecSpec, resolveCodecSpec } from '../../../lib/codecs/index.js'
import { outputChunkBytes } from '../../../lib/codecs/gzip.js'
import { compressXerial, decompressSnappy } from '../../../lib/codecs/snappy.js'
import { SqueezeError } from '../../../lib/errors.js'
import { corpusPath } from '../../helpers/corpus.js'

/** The reference decoder (Debian's lz4, scripts/setup.sh), which also checks the frame header's checksum. */
const lz4CliDecode = (frame: Buffer): Buffer => execFileSync('lz4', ['-d', '-c'], { input: frame, maxBuffer: 64 << 20 })

// Log-like text with some entropy (a fixed LCG), so stronger levels have something to find.
let state = 12345
const next = (n: number): number => (state = (state * 1103515245 + 12345) % 2147483648) % n
const sample = Buffer.from(
  Array.from(
    { length: 3000 },
    () =>
      `10.0.${next(8)}.${next(250)} GET /api/v1/items/${next(400)}?page=${next(30)} HTTP/1.1 ${[200, 200, 200, 304, 404][next(5)]} ${next(90000)} "Mozilla/5.0 (X11; Linux x86_64) rv:${next(120)}.0"\n`
  ).join('')
)

describe('codecs', () => {
  for (const spec of [
    'none',
    'gzip:1',
    'gzip:9',
    'snappy',
    'lz4:1',
    'lz4:2',
    'lz4:9',
    'lz4:17',
    'zstd:-5',
    'zstd:1',
    'zstd:19'
  ]) {
    it(`${spec} round-trips bytes exactly`, () => {
      const codec = createCodec(parseCodecSpec(spec))
      const compressed = codec.compress(sample)
      assert.deepEqual(codec.decompress(compressed), sample)
      assert.deepEqual(decoderForId(codec.id)?.decompress(compressed), sample)
      if (codec.name !== 'none') assert.ok(compressed.length < sample.length / 2, `${spec} should shrink log lines`)
    })
  }

  it('none, lz4, zstd and snappy decompress into a given buffer exactly as into a new one, and answer -1 when it is too small', () => {
    for (const spec of ['none', 'lz4:1', 'lz4:9', 'zstd:3', 'snappy']) {
      const codec = createCodec(parseCodecSpec(spec))
      const compressed = codec.compress(sample)
      const into = codec.decompressInto
      assert.ok(into !== undefined, `${spec} can decompress in place`)
      const big = Buffer.alloc(sample.length + 300_000, 0xee)
      const written = into(compressed, big)
      assert.equal(written, sample.length)
      assert.deepEqual(big.subarray(0, written), sample)
      assert.equal(into(compressed, Buffer.alloc(100)), -1, `${spec}: too small is -1, not an overflow`)
    }
  })

  it("zstd writes what zstd-napi's own compress() writes, byte for byte, at every level and size", () => {
    const reference = createRequire(import.meta.url)('zstd-napi') as {
      compress(input: Uint8Array, params: { compressionLevel: number }): Buffer
    }
    for (const level of [-5, 1, 3, 9, 19]) {
      const codec = createCodec({ codec: 'zstd', level })
      for (const input of [sample, sample.subarray(0, 100), Buffer.alloc(0)]) {
        const expected = reference.compress(input, { compressionLevel: level })
        assert.ok(codec.compress(input).equals(expected), `zstd:${level}, ${input.length} bytes`)
      }
    }
  })

  it("a thread that compresses with zstd loads zstd-napi's binding only, not the package's streaming API", async () => {
    // What a compression thread pays at boot: the module itself and the zstd codec, used once.
    const code = `
      const { parentPort } = require('node:worker_threads')
      import(process.env.CODECS).then(({ createCodec }) => {
        createCodec({ codec: 'zstd', level: 3 }).compress(Buffer.from('x'.repeat(1000)))
        parentPort.postMessage(Object.keys(require('node:module')._cache))
      })`
    const codecsUrl = new URL('../../../lib/codecs/index.js', import.meta.url).href
    const worker = new Worker(code, { eval: true, env: { ...process.env, CODECS: codecsUrl } })
    const loaded = await new Promise<string[]>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    await worker.terminate()
    assert.ok(
      loaded.some((file) => file.endsWith('/zstd-napi/binding.js')),
      'the binding loads'
    )
    assert.deepEqual(
      loaded.filter((file) => file.includes('/zstd-napi/dist/')),
      [],
      "zstd-napi's index and its streaming classes stay unloaded"
    )
  })

  it('levels are per instance: zstd 1 and zstd 19 give different sizes side by side', () => {
    const fast = createCodec({ codec: 'zstd', level: 1 })
    const strong = createCodec({ codec: 'zstd', level: 19 })
    const a = fast.compress(sample)
    const b = strong.compress(sample)
    const again = fast.compress(sample)
    assert.notEqual(a.length, b.length)
    assert.ok(b.length < a.length)
    assert.equal(again.length, a.length)
  })

  it('gzip levels change the output', () => {
    assert.notEqual(
      createCodec({ codec: 'gzip', level: 1 }).compress(sample).length,
      createCodec({ codec: 'gzip', level: 9 }).compress(sample).length
    )
  })

  it('gzip inflates in one chunk of the size its trailer gives, and a stream whose trailer does not give it still reads as zlib reads it', () => {
    const gzip = createCodec({ codec: 'gzip', level: 6 })
    const big = Buffer.concat(Array.from({ length: 40 }, () => sample))
    const frame = gzip.compress(big)
    assert.equal(outputChunkBytes(frame), big.length + 64, 'ISIZE plus a little: the output fits one chunk')
    assert.ok(gzip.decompress(frame).equals(big))
    assert.equal(outputChunkBytes(Buffer.alloc(10)), 16 * 1024, "too short for a trailer: zlib's own chunk")
    // Two members (a trailer that gives only the last one's size): all of the output, in more chunks.
    const twoMembers = Buffer.concat([gzipSync(big), gzipSync(sample)])
    assert.ok(gzip.decompress(twoMembers).equals(Buffer.concat([big, sample])))
    // A trailer that claims 4 GiB asks for the capped chunk and is refused by the decompression cap before
    // inflating; one that claims 0 gets zlib's own chunk size, and zlib refuses the stream on its length check.
    for (const claimed of [0xffffffff, 0]) {
      const lying = Buffer.from(frame)
      lying.writeUInt32LE(claimed, lying.length - 4)
      assert.ok(outputChunkBytes(lying) <= 64 * 1024 * 1024)
      assert.throws(() => gunzipSync(lying), /incorrect length check/)
      assert.throws(() => gzip.decompress(lying), claimed === 0 ? /incorrect length check/ : /decompression cap/)
    }
  })

  it('snappy writes xerial framing and reads both framed and bare blocks', () => {
    const framed = compressXerial(sample)
    assert.equal(framed.subarray(1, 7).toString('latin1'), 'SNAPPY')
    assert.deepEqual(decompressSnappy(framed), sample)
    const small = Buffer.from('plain block from kafkajs-snappy')
    const bare = (createRequire(import.meta.url)('snappy') as { compressSync(b: Buffer): Buffer }).compressSync(small)
    assert.deepEqual(decompressSnappy(bare), small)
  })

  it('parses codec specs with defaults and negative zstd levels', () => {
    assert.deepEqual(parseCodecSpec('zstd'), { codec: 'zstd', level: 3 })
    assert.deepEqual(parseCodecSpec('ZSTD:-7'), { codec: 'zstd', level: -7 })
    assert.deepEqual(parseCodecSpec('gzip'), { codec: 'gzip', level: 6 })
    assert.deepEqual(
      parseCodecSpec('lz4'),
      { codec: 'lz4', level: 1 },
      'the fast compressor, as the Java and librdkafka defaults'
    )
    assert.deepEqual(parseCodecSpec('none'), { codec: 'none', level: null })
    assert.deepEqual([...CODEC_NAMES], ['none', 'gzip', 'snappy', 'lz4', 'zstd'])
  })

  it('rejects unknown codecs and bad levels with a message that lists valid values', () => {
    assert.throws(
      () => parseCodecSpec('brotli'),
      (err: unknown) =>
        err instanceof SqueezeError &&
        err.code === 'SQUEEZE_ERR_CODEC_UNKNOWN' &&
        /none, gzip, snappy, lz4, zstd/.test(err.message)
    )
    assert.throws(
      () => parseCodecSpec('zstd:23'),
      (err: unknown) =>
        err instanceof SqueezeError && err.code === 'SQUEEZE_ERR_CODEC_LEVEL' && /-131072\.\.22/.test(err.message)
    )
    assert.throws(() => parseCodecSpec('gzip:0'), /compression\.gzip\.level accepts 1\.\.9/)
    for (const level of [0, 18, -1]) {
      assert.throws(
        () => parseCodecSpec(`lz4:${level}`),
        (err: unknown) =>
          err instanceof SqueezeError &&
          err.code === 'SQUEEZE_ERR_CODEC_LEVEL' &&
          /compression\.lz4\.level accepts 1\.\.17 \(default 1\)/.test(err.message)
      )
    }
    assert.deepEqual(
      Array.from({ length: 17 }, (_, i) => parseCodecSpec(`lz4:${i + 1}`).level),
      Array.from({ length: 17 }, (_, i) => i + 1),
      'every Kafka lz4 level'
    )
    assert.throws(() => parseCodecSpec('snappy:3'), /takes no level/)
    assert.throws(() => parseCodecSpec('zstd:fast'), /invalid level "fast"/)
    assert.throws(() => resolveCodecSpec('zstd', 2.5), /invalid zstd level 2.5/)
  })

  it('lz4 frames are Kafka-style (independent 64 KiB blocks) and readable by the reference lz4 CLI', () => {
    for (const level of [1, 9]) {
      const frame = createCodec({ codec: 'lz4', level }).compress(sample)
      assert.equal(frame.readUInt32LE(0), 0x184d2204)
      assert.equal(frame[4], 0x60)
      assert.equal(frame[5], 0x40)
      assert.deepEqual(lz4CliDecode(frame), sample)
    }
  })

  it('lz4 levels run what they say on the access log: LZ4HC levels store no more than lz4:1 and climb with the level', () => {
    const log = readFileSync(corpusPath('access_apache_semicomplete_2015.log'))
    const size = (level: number): number => createCodec({ codec: 'lz4', level }).compress(log).length
    const fast = size(1)
    const [hc3, hc9, hc12, hc17] = [size(3), size(9), size(12), size(17)]
    assert.ok(hc9 <= fast && hc17 <= fast, `lz4:9 ${hc9} and lz4:17 ${hc17} bytes must not exceed lz4:1 ${fast}`)
    // The level reaches LZ4HC: a binding that dropped it (as the lz4 package's compressHC does) gives one size.
    assert.ok(hc12 < hc9 && hc9 < hc3, `lz4:3 ${hc3} > lz4:9 ${hc9} > lz4:12 ${hc12} bytes`)
    assert.equal(hc17, hc12, 'LZ4HC caps its level at 12, so 13..17 compress as 12')
  })

  it('lz4 at any level 1..17 round-trips arbitrary bytes, and the reference lz4 CLI decodes the frame independently', () => {
    // Repeats of random snippets give the match finder work; the length crosses the 64 KiB block boundary.
    const input = fc
      .array(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4000 })), {
        maxLength: 40
      })
      .map((parts) =>
        Buffer.concat(parts.map(([bytes, times]) => Buffer.alloc(Math.min(bytes.length * times, 8000), bytes)))
      )
    fc.assert(
      fc.property(input, fc.integer({ min: 1, max: 17 }), (bytes, level) => {
        const codec = createCodec({ codec: 'lz4', level })
        const frame = codec.compress(bytes)
        assert.deepEqual(codec.decompress(frame), bytes)
        assert.deepEqual(lz4CliDecode(frame), bytes)
      }),
      { numRuns: 300, seed: 10 }
    )
  })

  it('corrupt compressed input throws instead of returning garbage', () => {
    for (const spec of ['gzip', 'snappy', 'lz4', 'zstd']) {
      const codec = createCodec(parseCodecSpec(spec))
      const compressed = codec.compress(sample)
      const broken = Buffer.from(compressed.subarray(0, Math.floor(compressed.length / 2)))
      assert.throws(() => {
        const out = codec.decompress(broken)
        if (!out.equals(sample)) throw new Error('decoded garbage')
      }, `${spec} must not silently accept a truncated frame`)
    }
  })
})
