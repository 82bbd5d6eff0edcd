import assert from 'node:assert/strict'
import { once } from 'node:events'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import type { CompressionWorkerData, SealReply, SealRequest } from '../../../lib/producer/compression-worker.js'
import { NON_IDEMPOTENT, RecordBatchBuilder, stampProducerState } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'

const WORKER_URL = new URL('../../../lib/producer/compression-worker.js', import.meta.url)

function request(id: number, codec: 'zstd' | 'brotli', postedAtMs = Date.now()): SealRequest {
  const builder = new RecordBatchBuilder(64 * 1024, 64 * 1024, Buffer.allocUnsafeSlow)
  for (let i = 0; i < 100; i++)
    builder.tryAppend({ key: null, value: Buffer.from(`GET /item/${i} 200`) }, 1_700_000_000_000 + i)
  return { id, spec: { codec: codec as 'zstd', level: 3 }, batch: builder.finish(), postedAtMs }
}

describe('compression worker', () => {
  it("says it is ready once its codecs are loaded, seals a batch, hands the builder's buffer back, and answers a codec error with its message", async (t) => {
    const workerData: CompressionWorkerData = {
      thread: 0,
      preload: [
        { codec: 'zstd', level: 3 },
        { codec: 'brotli' as 'zstd', level: 1 }
      ]
    }
    const worker = new Worker(WORKER_URL, { workerData })
    t.after(() => worker.terminate())
    // A codec that cannot load (brotli is none of Kafka's) does not keep the thread from being ready.
    const [ready] = (await once(worker, 'message')) as [SealReply]
    assert.deepEqual(ready, { ready: true })
    // Posted, by its stamp, 5 s ago: the thread counts that as the batch's wait for it, apart from its own time on it.
    const ok = request(1, 'zstd', Date.now() - 5000)
    worker.postMessage(ok, [ok.batch.records.buffer as ArrayBuffer])
    const [reply] = (await once(worker, 'message')) as [SealReply]
    assert.ok('bytes' in reply, JSON.stringify(reply))
    assert.equal(reply.id, 1)
    assert.equal(reply.records?.byteLength, 64 * 1024, 'the whole builder buffer comes back for reuse')
    const sealed = Buffer.from(reply.bytes)
    stampProducerState(sealed, NON_IDEMPOTENT)
    const batch = readBatch(sealed, { verifyCrc: true })
    assert.deepEqual(
      batch.records.map((r) => r.value?.toString()),
      Array.from({ length: 100 }, (_, i) => `GET /item/${i} 200`)
    )
    assert.ok(reply.compressCpuSeconds >= 0)
    assert.ok(reply.timing.waitedMs >= 5000, `waited ${reply.timing.waitedMs} ms`)
    assert.ok(reply.timing.wallSeconds >= 0 && reply.timing.wallSeconds < 5, `on it for ${reply.timing.wallSeconds} s`)

    const bad = request(2, 'brotli')
    worker.postMessage(bad, [bad.batch.records.buffer as ArrayBuffer])
    const [failed] = (await once(worker, 'message')) as [SealReply]
    assert.ok('error' in failed && failed.error.length > 0, JSON.stringify(failed))
    assert.equal(failed.id, 2)
  })
})
