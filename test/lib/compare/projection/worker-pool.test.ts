import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import { createCodec, parseCodecSpec } from '../../../../lib/codecs/index.js'
import type { ProjectionTask } from '../../../../lib/compare/projection/project-target.js'
import { packSlots, unpackSlots } from '../../../../lib/compare/projection/slot-table.js'
import { sealRecords } from '../../../../lib/protocol/record-batch-builder.js'
import { withPool } from './with-pool.js'

const REAL_WORKER = new URL('../../../../lib/compare/projection/projection-worker.js', import.meta.url).href

/** One chunk of `batches` batches of `batchBytes` (text, so every codec shrinks it), as the projection shares it. */
function chunk(batches: number, batchBytes: number): { data: SharedArrayBuffer; records: Buffer[] } {
  const data = new SharedArrayBuffer(batches * batchBytes)
  const records: Buffer[] = []
  for (let b = 0; b < batches; b++) {
    const text = Buffer.from(
      Array.from({ length: batchBytes }, (_, i) => `batch ${b} line ${Math.floor(i / 40)}\n`)
        .join('')
        .slice(0, batchBytes)
    )
    new Uint8Array(data).set(text, b * batchBytes)
    records.push(text)
  }
  return { data, records }
}

function task(spec: string, data: SharedArrayBuffer, batches: number, batchBytes: number): ProjectionTask {
  const slots = Array.from({ length: batches }, (_, b) => ({
    partition: b % 3,
    start: b * batchBytes,
    end: (b + 1) * batchBytes,
    count: 1,
    firstTimestamp: 0,
    maxTimestamp: 0
  }))
  return { spec: parseCodecSpec(spec), format: null, data, slots, readBack: true }
}

/** A projection thread written for the test: thread 0 claims the first task it is posted, then exits with code 3. */
function dyingFirstThreadWorker(): URL {
  const file = join(tmpdir(), `squeeze-projection-dying-${process.pid}.mjs`)
  writeFileSync(
    file,
    [
      "import { parentPort, workerData } from 'node:worker_threads'",
      'const { claims, index } = workerData',
      'if (index === 0) {',
      "  parentPort.on('message', (m) => { if (m.slot >= 0 && Atomics.compareExchange(claims, m.slot, m.id, -1 - index) === m.id) process.exit(3) })",
      '} else {',
      // The other threads wait until thread 0 holds a task, so which task it dies with is not a race.
      '  while (!claims.includes(-1)) Atomics.wait(claims, claims.length - 1, 0, 5)',
      `  await import(${JSON.stringify(REAL_WORKER)})`,
      '}'
    ].join('\n')
  )
  return pathToFileURL(file)
}

/**
 * A projection thread written for the test: it appends a line to `log` for each task it claims, works on it for
 * 20 ms (a chunk of a slow target), and answers with an empty result.
 */
function countingWorker(log: string): URL {
  const file = join(tmpdir(), `squeeze-projection-counting-${process.pid}.mjs`)
  writeFileSync(
    file,
    [
      "import { appendFileSync } from 'node:fs'",
      "import { parentPort, workerData } from 'node:worker_threads'",
      'const { claims, index } = workerData',
      'const nap = new Int32Array(new SharedArrayBuffer(4))',
      "parentPort.on('message', (m) => {",
      "  if (!('task' in m)) return",
      '  if (m.slot >= 0 && Atomics.compareExchange(claims, m.slot, m.id, -1 - index) !== m.id) return',
      `  appendFileSync(${JSON.stringify(log)}, 'claimed\\n')`,
      '  Atomics.wait(nap, 0, 0, 20)',
      '  const result = { records: 0, batchStoredBytes: [], compressCpuSeconds: 0, decompressCpuSeconds: 0,',
      '    decodeCpuSeconds: 0, readSeconds: 0, mismatch: null }',
      '  parentPort.postMessage({ id: m.id, result })',
      '})'
    ].join('\n')
  )
  return pathToFileURL(file)
}

describe('ProjectionPool: every thread takes the next task not yet claimed', () => {
  it('a cut withdraws the tasks no thread has claimed: the run rejects at once, and the pool serves the next run', async () => {
    const batchBytes = 16 * 1024
    const { data, records } = chunk(1, batchBytes)
    const log = join(tmpdir(), `squeeze-projection-claims-${process.pid}.log`)
    writeFileSync(log, '')
    await withPool(
      1,
      async (pool) => {
        const cut = new AbortController()
        const run = pool.run(
          Array.from({ length: 20 }, () => task('gzip:9', data, records.length, batchBytes)),
          cut.signal
        )
        cut.abort(new Error('deadline'))
        await assert.rejects(run, (err: Error & { code?: string }) => {
          assert.equal(err.code, 'SQUEEZE_ERR_RUN_CUT')
          assert.equal(err.message, 'cut: deadline')
          return true
        })
        await assert.rejects(pool.run([task('lz4', data, 1, batchBytes)], cut.signal), /^SqueezeError: cut: deadline$/)
        // The thread reads its messages in order: once this answers, it has skipped or run every task before it.
        const [after] = await pool.run([task('lz4', data, records.length, batchBytes)])
        assert.ok(after !== undefined)
      },
      countingWorker(log)
    )
    const claimed = readFileSync(log, 'utf8').split('\n').filter(Boolean).length
    rmSync(log)
    // The one task the thread may have claimed before the cut, and the run after it: not the other nineteen.
    assert.ok(claimed <= 2, `${claimed} tasks run`)
  })

  it('answers each task with its own result, on any number of threads, whatever order the threads finish in', async () => {
    const batchBytes = 64 * 1024
    const { data, records } = chunk(6, batchBytes)
    // Costs 10x apart, so the threads finish out of order: gzip:9 and zstd:19 against none and lz4.
    const specs = ['gzip:9', 'none', 'zstd:19', 'lz4', 'snappy', 'zstd:1', 'none', 'gzip:1']
    for (const threads of [1, 3]) {
      const tasks = Array.from({ length: 5 }, () => specs.map((s) => task(s, data, records.length, batchBytes))).flat()
      const results = await withPool(threads, (pool) => pool.run(tasks))
      assert.equal(results.length, tasks.length)
      results.forEach((result, i) => {
        const codec = createCodec((tasks[i] as ProjectionTask).spec)
        const sealed = records.map(
          (r) =>
            sealRecords({ records: r, count: 1, firstTimestamp: 0, maxTimestamp: 0 }, codec, Buffer.allocUnsafe).bytes
              .length
        )
        assert.deepEqual(
          result.batchStoredBytes,
          sealed,
          `${threads} threads, task ${i} (${codec.name}): its own batches`
        )
        assert.equal(result.mismatch, null, `task ${i} read back as it went in`)
      })
    }
  })

  it('a thread that dies fails the one task it claimed, and the other threads take every task it had not', async () => {
    const batchBytes = 16 * 1024
    const { data, records } = chunk(2, batchBytes)
    const settled = await withPool(
      2,
      (pool) =>
        Promise.allSettled(
          Array.from({ length: 6 }, () => pool.run([task('zstd:3', data, records.length, batchBytes)]))
        ),
      dyingFirstThreadWorker()
    )
    const failed = settled.filter((s) => s.status === 'rejected')
    assert.equal(failed.length, 1, 'the task thread 0 claimed')
    assert.match(
      String((failed[0] as PromiseRejectedResult).reason),
      /^SqueezeError: a projection thread exited with code 3$/
    )
    assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 5)
  })

  it('once every thread has died, each task fails with one line saying so, and none waits', async () => {
    const batchBytes = 16 * 1024
    const { data, records } = chunk(1, batchBytes)
    await withPool(
      1,
      async (pool) => {
        await assert.rejects(
          pool.run([task('zstd:3', data, records.length, batchBytes), task('lz4', data, records.length, batchBytes)]),
          /a projection thread exited with code 3/
        )
        await assert.rejects(
          pool.run([task('lz4', data, records.length, batchBytes)]),
          /^SqueezeError: projecting lz4 failed: every projection thread has exited$/
        )
      },
      dyingFirstThreadWorker()
    )
  })
})

describe("packSlots: a chunk's batch slots in shared memory", () => {
  it('unpack to the same slots, timestamps of today and offsets of a 64 MiB chunk exact, and an empty chunk to none', () => {
    const slots = Array.from({ length: 1000 }, (_, i) => ({
      partition: i % 7,
      start: i * 67_000,
      end: (i + 1) * 67_000 - (i % 3),
      count: 1 + (i % 500),
      firstTimestamp: 1_796_148_158_996 + i,
      maxTimestamp: 1_796_148_158_996 + 2 * i
    }))
    const table = packSlots(slots)
    assert.ok(table.buffer instanceof SharedArrayBuffer)
    assert.deepEqual(unpackSlots(table), slots)
    assert.deepEqual(unpackSlots(packSlots([])), [])
  })
})
