import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, it } from 'node:test'
import { createCodec, type CodecSpec } from '../../../lib/codecs/index.js'
import { createLogger } from '../../../lib/log/logger.js'
import { createBatchSealer, INLINE_BELOW_BYTES, type BatchSealer } from '../../../lib/producer/batch-sealer.js'
import { RecordBatchBuilder, type SealedBatch } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'
import { NON_IDEMPOTENT, stampProducerState } from '../../../lib/protocol/record-batch-builder.js'

const log = createLogger({ level: 'silent', name: 'test' })

function fill(sealer: BatchSealer, capacity: number, prefix: string): RecordBatchBuilder {
  const builder = new RecordBatchBuilder(capacity, capacity, (size) => sealer.buffer(size))
  for (let i = 0; builder.tryAppend({ key: null, value: Buffer.from(`${prefix} GET /index-${i % 97}.html 200 ${i}`) }, 1_700_000_000_000 + i); i++);
  return builder
}

function seal(sealer: BatchSealer, builder: RecordBatchBuilder, spec: CodecSpec): Promise<SealedBatch> {
  return new Promise((resolve, reject) => sealer.seal(builder.finish(), spec, (r) => (r instanceof Error ? reject(r) : resolve(r))))
}

function values(sealed: SealedBatch): string[] {
  stampProducerState(sealed.bytes, NON_IDEMPOTENT)
  return readBatch(sealed.bytes, { verifyCrc: true }).records.map((r) => r.value?.toString() ?? '')
}

describe('batch sealer', () => {
  it('seals on the compression thread byte for byte as inline, in order, and recycles the builders\' buffers', async () => {
    const threaded = createBatchSealer(true, log)
    const inline = createBatchSealer(false, log)
    try {
      for (const spec of [{ codec: 'zstd', level: 3 }, { codec: 'lz4', level: 1 }, { codec: 'gzip', level: 6 }, { codec: 'snappy', level: null }] as CodecSpec[]) {
        const a = fill(threaded, 256 * 1024, spec.codec)
        const b = fill(inline, 256 * 1024, spec.codec)
        const expected = values(await seal(inline, b, spec))
        const sealed = await seal(threaded, a, spec)
        assert.ok(sealed.compressCpuSeconds >= 0)
        assert.ok(sealed.bytes.length < sealed.uncompressedBytes / 2)
        assert.deepEqual(values(sealed), expected)
        createCodec(spec).decompress(sealed.bytes.subarray(61))
      }
      // The buffer handed to the thread came back and is handed out again.
      const first = threaded.buffer(256 * 1024)
      assert.equal(first.length, 256 * 1024)
      // Many batches in flight at once still come back in the order they were sealed.
      const order: number[] = []
      await Promise.all(Array.from({ length: 6 }, (_, i) => seal(threaded, fill(threaded, 64 * 1024, `b${i}`), { codec: 'zstd', level: 1 }).then((s) => {
        order.push(i)
        assert.match(values(s)[0] ?? '', new RegExp(`^b${i} `))
      })))
      assert.deepEqual(order, [0, 1, 2, 3, 4, 5])
      // Per batch the thread's CPU is tick-grained; over many batches it adds up to the work done.
      let cpu = 0
      const started = process.cpuUsage()
      for (let i = 0; i < 20; i++) cpu += (await seal(threaded, fill(threaded, 512 * 1024, `c${i}`), { codec: 'zstd', level: 9 })).compressCpuSeconds
      const used = process.cpuUsage(started)
      assert.ok(cpu > 0, 'the compression thread\'s CPU is measured')
      assert.ok(cpu < (used.user + used.system) / 1e6 + 0.01, `no more than the whole process used (${cpu} s)`)
    } finally {
      await threaded.close()
    }
  })

  it('seals small batches inline (synchronously) and reports a codec error instead of throwing', async () => {
    const sealer = createBatchSealer(true, log)
    try {
      const builder = new RecordBatchBuilder(INLINE_BELOW_BYTES / 2)
      builder.tryAppend({ key: null, value: Buffer.from('small') }, 1)
      let sealed: SealedBatch | Error | undefined
      sealer.seal(builder.finish(), { codec: 'zstd', level: 3 }, (r) => { sealed = r })
      assert.ok(sealed !== undefined && !(sealed instanceof Error), 'sealed before seal() returned')
      const bad = fill(sealer, 64 * 1024, 'x')
      await assert.rejects(seal(sealer, bad, { codec: 'zstd', level: 99 }), /invalid zstd level 99/)
    } finally {
      await sealer.close()
    }
  })

  it('fails the batches a dying compression thread held, with a clear error, then seals inline', async () => {
    const dying = join(tmpdir(), `squeeze-dying-worker-${process.pid}.mjs`)
    writeFileSync(dying, "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(3))\n")
    const sealer = createBatchSealer(true, log, pathToFileURL(dying))
    try {
      await assert.rejects(seal(sealer, fill(sealer, 64 * 1024, 'lost'), { codec: 'zstd', level: 3 }), /compression thread exited with code 3/)
      const after = await seal(sealer, fill(sealer, 64 * 1024, 'after'), { codec: 'zstd', level: 3 })
      assert.match(values(after)[0] ?? '', /^after /)
    } finally {
      await sealer.close()
    }
  })
})
