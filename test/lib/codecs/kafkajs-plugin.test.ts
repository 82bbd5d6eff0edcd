import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import kafkajs from 'kafkajs'
import { createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { installKafkajsDecoders, toKafkajsCodec, type KafkajsCodec } from '../../../lib/codecs/kafkajs-plugin.js'

const COPIER = new URL('../../../lib/copier/copier.js', import.meta.url).href

describe('kafkajs decoders', () => {
  it("importing the copier leaves kafkajs's process-wide codec registry as kafkajs shipped it", () => {
    // A fresh process: this test file's own imports must not decide what the registry held before the import.
    const script = `import kafkajs from 'kafkajs'
const before = [2, 3, 4].map((id) => kafkajs.CompressionCodecs[id])
await import(${JSON.stringify(COPIER)})
process.stdout.write(JSON.stringify([2, 3, 4].filter((id, i) => kafkajs.CompressionCodecs[id] !== before[i])))`
    const changed = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('../../../', import.meta.url),
      encoding: 'utf8'
    })
    assert.deepEqual(JSON.parse(changed), [])
  })

  it("installKafkajsDecoders lets kafkajs decode snappy, lz4 and zstd with squeeze's codecs", async () => {
    installKafkajsDecoders()
    const registry = kafkajs.CompressionCodecs as unknown as Record<number, () => KafkajsCodec>
    const input = Buffer.from('GET /index.html 200 512\n'.repeat(200))
    for (const [id, name] of [
      [2, 'snappy'],
      [3, 'lz4'],
      [4, 'zstd']
    ] as const) {
      const compressed = createCodec(parseCodecSpec(name)).compress(input)
      const plugin = registry[id]
      assert.ok(plugin !== undefined, name)
      assert.deepEqual(await plugin().decompress(Buffer.from(compressed)), input, name)
    }
  })
  it('compresses batches kafkajs encodes side by side each into a buffer of its own size', async () => {
    for (const name of ['lz4', 'zstd'] as const) {
      const codec = createCodec(parseCodecSpec(name))
      const plugin = toKafkajsCodec(codec)()
      // Hex of random bytes: outputs too large for Buffer's shared pool (half of Buffer.poolSize), so each gets memory of its own.
      const inputs = [1, 2].map((n) => Buffer.from(randomBytes(n * Buffer.poolSize).toString('hex')))
      // kafkajs awaits each compress() among others: both results must survive the other's compression.
      const outputs = await Promise.all(inputs.map((buffer) => plugin.compress({ buffer })))
      outputs.forEach((out, i) => {
        assert.deepEqual(codec.decompress(out), inputs[i], name)
        assert.equal(
          out.buffer.byteLength,
          out.length,
          `${name}: the batch holds ${out.buffer.byteLength} bytes for ${out.length}`
        )
      })
    }
  })
})
