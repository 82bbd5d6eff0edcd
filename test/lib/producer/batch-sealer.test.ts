import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, it } from 'node:test'
import { createCodec, type CodecSpec } from '../../../lib/codecs/index.js'
import { pino } from 'pino'
import { createLogger, type Logger } from '../../../lib/log/logger.js'
import { createBatchSealer, INLINE_BELOW_BYTES, type BatchSealer } from '../../../lib/producer/batch-sealer.js'
import { RecordBatchBuilder, type SealedBatch } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch } from '../../../lib/protocol/record-batch-reader.js'
import { NON_IDEMPOTENT, stampProducerState } from '../../../lib/protocol/record-batch-builder.js'
import { poll } from '../../helpers/poll.js'

const log = createLogger({ level: 'silent', name: 'test' })

/** CPU seconds the kernel counted for this process's thread of that name (Linux schedstat). */
function threadCpuByName(name: string): number {
  const task = readdirSync('/proc/self/task').find(
    (tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === name
  )
  assert.ok(task !== undefined, `a thread named ${name}`)
  return Number(readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[0]) / 1e9
}

/** A logger that keeps its warnings' messages, to check what a failure says and how often. */
function capturedWarnings(): { log: Logger; messages: () => string[] } {
  const lines: string[] = []
  const captured = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) })
  return { log: captured, messages: () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg) }
}

function fill(sealer: BatchSealer, capacity: number, prefix: string): RecordBatchBuilder {
  const builder = new RecordBatchBuilder(capacity, capacity, (size) => sealer.buffer(size))
  for (
    let i = 0;
    builder.tryAppend(
      { key: null, value: Buffer.from(`${prefix} GET /index-${i % 97}.html 200 ${i}`) },
      1_700_000_000_000 + i
    );
    i++
  );
  return builder
}

function seal(sealer: BatchSealer, builder: RecordBatchBuilder, spec: CodecSpec): Promise<SealedBatch> {
  return new Promise((resolve, reject) =>
    sealer.seal(builder.finish(), spec, (r) => (r instanceof Error ? reject(r) : resolve(r)))
  )
}

/** Until `count` compression threads have loaded their modules and codecs and take batches. */
async function threadsReady(sealer: BatchSealer, count: number): Promise<void> {
  await poll(
    `${count} compression thread(s) ready`,
    async () => sealer.load().threads.filter((t) => t.alive && t.ready).length,
    (n) => n >= count,
    30_000
  )
}

/** Seals `builder`'s batch and checks it was sealed on the event loop: done before seal() returned. */
function sealedInline(sealer: BatchSealer, builder: RecordBatchBuilder, spec: CodecSpec, what: string): SealedBatch {
  let sealed: SealedBatch | Error | undefined
  sealer.seal(builder.finish(), spec, (r) => {
    sealed = r
  })
  assert.ok(sealed !== undefined && !(sealed instanceof Error), `${what} sealed before seal() returned`)
  return sealed
}

/** Once the sealer's one thread is ready, the next batch goes to it: its first batch. */
async function firstOnThread(sealer: BatchSealer, spec: CodecSpec, prefix: string, size: number): Promise<void> {
  await threadsReady(sealer, 1)
  assert.match(values(await seal(sealer, fill(sealer, size, prefix), spec))[0] ?? '', new RegExp(`^${prefix} `))
  assert.deepEqual(
    sealer.load().threads.map((t) => t.batches),
    [1],
    `${prefix}: the first batch on the thread`
  )
}

function values(sealed: SealedBatch): string[] {
  stampProducerState(sealed.bytes, NON_IDEMPOTENT)
  return readBatch(sealed.bytes, { verifyCrc: true }).records.map((r) => r.value?.toString() ?? '')
}

describe('batch sealer', () => {
  it("seals a records section it did not hand out (the copier's source batch) once per target on the thread, each as inline, leaving the caller's buffer whole", async () => {
    const threaded = createBatchSealer(1, log)
    const inline = createBatchSealer(0, log)
    try {
      const specs: CodecSpec[] = [
        { codec: 'zstd', level: 1 },
        { codec: 'zstd', level: 3 },
        { codec: 'gzip', level: 6 }
      ]
      threaded.start(specs)
      await threadsReady(threaded, 1)
      // Read into memory of the caller's (a fetch's decompression buffer), not a sealer buffer.
      const builder = fill(inline, 256 * 1024, 'src')
      const read = builder.finish()
      const foreign = { ...read, records: new Uint8Array(read.records) }
      const expected = values(
        await new Promise<SealedBatch>((resolve, reject) =>
          inline.seal({ ...read }, { codec: 'none', level: null }, (r) => (r instanceof Error ? reject(r) : resolve(r)))
        )
      )
      const sealed = await Promise.all(
        specs.map(
          (spec) =>
            new Promise<SealedBatch>((resolve, reject) =>
              threaded.seal(foreign, spec, (r) => (r instanceof Error ? reject(r) : resolve(r)))
            )
        )
      )
      assert.equal(foreign.records.byteLength, read.records.byteLength, "the caller's buffer is not transferred away")
      for (const one of sealed) assert.deepEqual(values(one), expected)
      assert.equal(threaded.load().threads[0]?.batches, specs.length, 'every target sealed on the thread')
    } finally {
      await threaded.close()
      await inline.close()
    }
  })

  it('keeps as many builder buffers for reuse as it is told (the producer: as many as buffer.memory holds batches)', async () => {
    const sealer = createBatchSealer(0, log, undefined, 6)
    const builders = Array.from({ length: 6 }, (_, i) => fill(sealer, 64 * 1024, `b${i}`))
    const first = new Set(builders.map((b) => b.finish().records.buffer))
    for (const b of builders) await seal(sealer, b, { codec: 'none', level: null })
    const again = Array.from({ length: 6 }, () => sealer.buffer(64 * 1024).buffer)
    assert.equal(again.filter((buffer) => first.has(buffer)).length, 6)
    await sealer.close()
  })

  it("seals on the compression thread byte for byte as inline, in order, and recycles the builders' buffers", async () => {
    const threaded = createBatchSealer(1, log)
    const inline = createBatchSealer(0, log)
    try {
      threaded.start([{ codec: 'zstd', level: 3 }])
      await threadsReady(threaded, 1)
      for (const spec of [
        { codec: 'zstd', level: 3 },
        { codec: 'lz4', level: 1 },
        { codec: 'gzip', level: 6 },
        { codec: 'snappy', level: null }
      ] as CodecSpec[]) {
        const a = fill(threaded, 256 * 1024, spec.codec)
        const b = fill(inline, 256 * 1024, spec.codec)
        const expected = values(await seal(inline, b, spec))
        const sealed = await seal(threaded, a, spec)
        assert.ok(sealed.compressCpuSeconds >= 0)
        assert.ok(sealed.bytes.length < sealed.uncompressedBytes / 2)
        assert.deepEqual(values(sealed), expected)
        createCodec(spec).decompress(sealed.bytes.subarray(61))
      }
      // The memory the thread read the last batch from is handed out again.
      const last = fill(threaded, 256 * 1024, 'last')
      const lent = last.finish().records.buffer
      assert.ok(lent instanceof SharedArrayBuffer, "a builder's buffer is shared memory, read in place by the thread")
      await seal(threaded, last, { codec: 'zstd', level: 3 })
      const first = threaded.buffer(256 * 1024)
      assert.equal(first.length, 256 * 1024)
      assert.equal(first.buffer, lent, 'the buffer comes back once the thread replied')
      assert.equal(
        threaded.load().threads[0]?.batches,
        3,
        'zstd and gzip went to the thread (lz4 and snappy, cheap, seal inline until measured dear)'
      )
      // Many batches in flight at once still come back in the order they were sealed.
      const order: number[] = []
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          seal(threaded, fill(threaded, 64 * 1024, `b${i}`), { codec: 'zstd', level: 1 }).then((s) => {
            order.push(i)
            assert.match(values(s)[0] ?? '', new RegExp(`^b${i} `))
          })
        )
      )
      assert.deepEqual(order, [0, 1, 2, 3, 4, 5])
      // Per batch the thread's CPU is tick-grained; over many batches it adds up to the work done.
      let cpu = 0
      const started = process.cpuUsage()
      for (let i = 0; i < 20; i++)
        cpu += (await seal(threaded, fill(threaded, 512 * 1024, `c${i}`), { codec: 'zstd', level: 9 }))
          .compressCpuSeconds
      const used = process.cpuUsage(started)
      assert.ok(cpu > 0, "the compression thread's CPU is measured")
      assert.ok(cpu < (used.user + used.system) / 1e6 + 0.01, `no more than the whole process used (${cpu} s)`)
    } finally {
      await threaded.close()
    }
  })

  it("hands a builder's buffer out again only once the thread is done with the batch in it", async () => {
    const sealer = createBatchSealer(1, log)
    try {
      sealer.start([{ codec: 'zstd', level: 19 }])
      await threadsReady(sealer, 1)
      const builder = fill(sealer, 512 * 1024, 'held')
      const lent = builder.finish().records.buffer
      const sealed = seal(sealer, builder, { codec: 'zstd', level: 19 })
      const meanwhile = Array.from({ length: 8 }, () => sealer.buffer(512 * 1024).buffer)
      assert.ok(!meanwhile.includes(lent), 'not while the thread may still be reading it')
      assert.match(values(await sealed)[0] ?? '', /^held /)
      assert.equal(sealer.buffer(512 * 1024).buffer, lent, 'then it is reused')
    } finally {
      await sealer.close()
    }
  })

  it('seals small batches inline (synchronously) and reports a codec error instead of throwing', async () => {
    const sealer = createBatchSealer(1, log)
    try {
      const builder = new RecordBatchBuilder(INLINE_BELOW_BYTES / 2)
      builder.tryAppend({ key: null, value: Buffer.from('small') }, 1)
      sealedInline(sealer, builder, { codec: 'zstd', level: 3 }, 'a small batch')
      const bad = fill(sealer, 64 * 1024, 'x')
      await assert.rejects(seal(sealer, bad, { codec: 'zstd', level: 99 }), /invalid zstd level 99/)
    } finally {
      await sealer.close()
    }
  })

  it('seals lz4:1 inline without starting a thread, and sends a cheap codec to a thread once its batches cost more than a hand-off', async () => {
    const sealer = createBatchSealer(1, log)
    try {
      sealer.start([
        { codec: 'lz4', level: 1 },
        { codec: 'none', level: null }
      ])
      assert.equal(sealer.load().threads.length, 0, 'a producer of lz4:1 starts no compression thread')
      const fast = sealedInline(
        sealer,
        fill(sealer, 1024 * 1024, 'fast'),
        { codec: 'lz4', level: 1 },
        'a 1 MiB lz4:1 batch'
      )
      assert.match(values(fast)[0] ?? '', /^fast /)
      // LZ4HC 12 is the same codec at tens of ms per MiB: its first batch is measured inline, the next go to a thread.
      const hc: CodecSpec = { codec: 'lz4', level: 12 }
      sealedInline(sealer, fill(sealer, 1024 * 1024, 'hc1'), hc, 'the first LZ4HC batch (measured)')
      // The second starts a thread and, while it boots, is sealed here too; once it is ready the next go to it.
      sealedInline(sealer, fill(sealer, 1024 * 1024, 'hc2'), hc, 'the second LZ4HC batch, while the thread boots,')
      assert.equal(sealer.load().threads.length, 1, 'a thread was started')
      await firstOnThread(sealer, hc, 'hc3', 1024 * 1024)
    } finally {
      await sealer.close()
    }
    const zstd = createBatchSealer(1, log)
    try {
      zstd.start([
        { codec: 'lz4', level: 1 },
        { codec: 'zstd', level: 3 }
      ])
      assert.equal(zstd.load().threads.length, 1, 'a producer with a zstd topic starts its thread up front')
    } finally {
      await zstd.close()
    }
  })

  it('seals on the event loop while its first thread boots (a short run does not wait for it), then hands batches to the thread', async () => {
    const sealer = createBatchSealer(1, log)
    try {
      const spec: CodecSpec = { codec: 'zstd', level: 3 }
      sealer.start([spec])
      assert.deepEqual(
        sealer.load().threads.map((t) => t.ready),
        [false],
        'the thread was started and is booting'
      )
      const early = sealedInline(
        sealer,
        fill(sealer, 256 * 1024, 'early'),
        spec,
        'a batch closed while the thread boots'
      )
      assert.match(values(early)[0] ?? '', /^early /)
      assert.ok(early.compressCpuSeconds >= 0)
      await firstOnThread(sealer, spec, 'late', 256 * 1024)
    } finally {
      await sealer.close()
    }
  })

  it('with inline seconds, seals on the event loop and starts no thread until compressing here has cost that much CPU', async () => {
    const inlineSeconds = 0.02
    const sealer = createBatchSealer(1, log, undefined, 4, inlineSeconds)
    try {
      const spec: CodecSpec = { codec: 'zstd', level: 19 }
      sealer.start([spec])
      assert.equal(sealer.load().threads.length, 0, 'no thread started with the producer')
      let spent = 0
      let batch = 0
      while (spent < inlineSeconds) {
        const sealed = sealedInline(
          sealer,
          fill(sealer, 256 * 1024, `b${batch}`),
          spec,
          `batch ${batch}, ${spent.toFixed(3)} CPU s spent inline`
        )
        assert.match(values(sealed)[0] ?? '', new RegExp(`^b${batch} `))
        spent += sealed.compressCpuSeconds
        batch++
        if (spent < inlineSeconds)
          assert.equal(sealer.load().threads.length, 0, `no thread after ${spent.toFixed(3)} CPU s`)
      }
      // The next batch starts the thread (and is sealed here while it boots); once ready, batches go to it.
      sealedInline(sealer, fill(sealer, 256 * 1024, 'boot'), spec, 'the batch that starts the thread')
      assert.equal(sealer.load().threads.length, 1, 'a thread was started')
      await firstOnThread(sealer, spec, 'late', 256 * 1024)
    } finally {
      await sealer.close()
    }
  })

  it('with inline seconds and input announced, starts its thread once that input is projected to cost them, not after they were spent, and waits for it to boot', async () => {
    const spec: CodecSpec = { codec: 'zstd', level: 19 }
    // Far more than two 256 KiB batches cost at zstd:19, far less than a GiB of them.
    const inlineSeconds = 5
    const told = createBatchSealer(1, log, undefined, 4, inlineSeconds)
    const untold = createBatchSealer(1, log, undefined, 4, inlineSeconds)
    try {
      told.start([spec])
      untold.start([spec])
      told.expect(1024 ** 3)
      // The first batch pays the codec's set-up: the cost per byte is measured on the next.
      for (const name of ['first', 'second']) {
        const sealed = sealedInline(
          told,
          fill(told, 256 * 1024, name),
          spec,
          `the ${name} batch (no cost per byte measured yet)`
        )
        assert.ok(sealed.compressCpuSeconds < inlineSeconds)
        assert.equal(told.load().threads.length, 0, `no thread after the ${name} batch`)
      }
      // The third batch starts the thread and waits for it: the event loop goes on reading the input meanwhile.
      const open = fill(told, 256 * 1024, 'third').finish()
      const third = new Promise<SealedBatch>((resolve, reject) =>
        told.seal(open, spec, (r) => (r instanceof Error ? reject(r) : resolve(r)))
      )
      assert.deepEqual(
        told.load().threads.map((t) => t.ready),
        [false],
        'a GiB announced at the measured cost starts the thread'
      )
      assert.ok(open.records.byteLength > 0, 'the batch waits on the event loop while the thread boots')
      assert.match(values(await third)[0] ?? '', /^third /)
      assert.deepEqual(
        told.load().threads.map((t) => t.batches),
        [1],
        'the third batch was sealed on the thread'
      )
      assert.equal(
        told.buffer(256 * 1024).buffer,
        open.records.buffer,
        'the thread read its records where they were (not a copy), and their buffer serves the next builder'
      )
      for (const name of ['first', 'second', 'third'])
        sealedInline(untold, fill(untold, 256 * 1024, name), spec, `${name} batch, no input announced`)
      assert.equal(
        untold.load().threads.length,
        0,
        'without the announcement, no thread before inline seconds were spent'
      )
    } finally {
      await told.close()
      await untold.close()
    }
  })

  it('fails the batches a dying compression thread held, with one clear error, then seals inline when it was the only one', async () => {
    const dying = join(tmpdir(), `squeeze-dying-worker-${process.pid}.mjs`)
    writeFileSync(
      dying,
      "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(3))\nparentPort.postMessage({ ready: true })\n"
    )
    const warnings = capturedWarnings()
    const sealer = createBatchSealer(1, warnings.log, pathToFileURL(dying))
    try {
      sealer.start([{ codec: 'zstd', level: 3 }])
      await threadsReady(sealer, 1)
      await assert.rejects(
        seal(sealer, fill(sealer, 64 * 1024, 'lost'), { codec: 'zstd', level: 3 }),
        /^Error: compression thread 1 of 1 exited with code 3$/
      )
      const after = await seal(sealer, fill(sealer, 64 * 1024, 'after'), { codec: 'zstd', level: 3 })
      assert.match(values(after)[0] ?? '', /^after /)
      assert.deepEqual(warnings.messages(), [
        'compression thread 1 of 1 exited with code 3; compressing on the event loop from now on'
      ])
    } finally {
      await sealer.close()
    }
  })

  it('a thread that dies before it is ready loses nothing: the batches an announced input gave it while it booted are sealed on the event loop', async () => {
    const neverReady = join(tmpdir(), `squeeze-never-ready-worker-${process.pid}.mjs`)
    // Dies while it boots, as a thread whose native codec fails to load would.
    writeFileSync(
      neverReady,
      "import { parentPort } from 'node:worker_threads'\nparentPort.on('message', () => process.exit(4))\nsetTimeout(() => process.exit(3), 200)\n"
    )
    const warnings = capturedWarnings()
    const spec: CodecSpec = { codec: 'zstd', level: 3 }
    const sealer = createBatchSealer(1, warnings.log, pathToFileURL(neverReady), 4, 1e-9)
    try {
      sealer.start([spec])
      sealer.expect(1024 ** 3)
      sealedInline(sealer, fill(sealer, 64 * 1024, 'first'), spec, 'the first batch (no cost measured yet)')
      const waiting = ['second', 'third'].map((name) => seal(sealer, fill(sealer, 64 * 1024, name), spec))
      assert.deepEqual(
        sealer.load().threads.map((t) => t.ready),
        [false],
        'handed to the booting thread'
      )
      const sealed = await Promise.all(waiting)
      assert.deepEqual(
        sealed.map((batch) => values(batch)[0]?.split(' ')[0]),
        ['second', 'third']
      )
      assert.deepEqual(warnings.messages(), [
        'compression thread 1 of 1 exited with code 3; compressing on the event loop from now on'
      ])
    } finally {
      await sealer.close()
    }
  })

  it('in a pool, a thread that dies fails only the batches it held, once, and the other threads go on', async () => {
    // Thread 0 dies at its first batch; the others run the real compression thread.
    const dying = join(tmpdir(), `squeeze-dying-first-worker-${process.pid}.mjs`)
    writeFileSync(
      dying,
      [
        "import { parentPort, workerData } from 'node:worker_threads'",
        `if (workerData.thread === 0) { parentPort.on('message', () => process.exit(3)); parentPort.postMessage({ ready: true }) }`,
        `else await import(${JSON.stringify(new URL('../../../lib/producer/compression-worker.js', import.meta.url).href)})`
      ].join('\n')
    )
    const warnings = capturedWarnings()
    const sealer = createBatchSealer(2, warnings.log, pathToFileURL(dying))
    try {
      sealer.start([{ codec: 'zstd', level: 3 }])
      await threadsReady(sealer, 1)
      await assert.rejects(
        seal(sealer, fill(sealer, 64 * 1024, 'lost'), { codec: 'zstd', level: 3 }),
        /^Error: compression thread 1 of 2 exited with code 3$/
      )
      // No thread is ready now: this batch starts the second and is sealed here while it boots.
      assert.match(
        values(await seal(sealer, fill(sealer, 64 * 1024, 'first'), { codec: 'zstd', level: 3 }))[0] ?? '',
        /^first /
      )
      await threadsReady(sealer, 1)
      for (const prefix of ['second', 'third'])
        assert.match(
          values(await seal(sealer, fill(sealer, 64 * 1024, prefix), { codec: 'zstd', level: 3 }))[0] ?? '',
          new RegExp(`^${prefix} `)
        )
      const [dead, alive] = sealer.load().threads
      assert.equal(dead?.alive, false)
      assert.equal(dead?.batches, 0)
      assert.equal(alive?.alive, true)
      assert.equal(alive?.batches, 2, 'the batches after the death went to the other thread, not inline')
      assert.deepEqual(warnings.messages(), ['compression thread 1 of 2 exited with code 3; the other threads go on'])
    } finally {
      await sealer.close()
    }
  })
})

describe('compression pool', () => {
  it("seals batches on several threads at once, reports the bytes queued, and counts each thread's CPU exactly", async () => {
    const sealer = createBatchSealer(3, log)
    try {
      const spec: CodecSpec = { codec: 'zstd', level: 9 }
      sealer.start([spec])
      await threadsReady(sealer, 1)
      const builders = Array.from({ length: 9 }, (_, i) => fill(sealer, 512 * 1024, `p${i}`))
      const started = process.cpuUsage()
      const queued: number[] = []
      const sealing = builders.map((b) => {
        const batch = b.finish()
        queued.push(batch.records.byteLength)
        return new Promise<SealedBatch>((resolve, reject) =>
          sealer.seal(batch, spec, (r) => (r instanceof Error ? reject(r) : resolve(r)))
        )
      })
      // Each batch found the threads started so far busy, so a new one started, up to three; then the least loaded.
      const during = sealer.load()
      assert.equal(during.threads.length, 3)
      assert.equal(during.queuedBatches, 9)
      assert.equal(
        during.queuedBytes,
        queued.reduce((a, b) => a + b, 0)
      )
      assert.ok(
        during.waitingBytes <= during.queuedBytes && during.waitingBytes >= during.queuedBytes - 3 * 512 * 1024,
        'at most one batch per thread is being compressed'
      )
      const sealed = await Promise.all(sealing)
      const used = process.cpuUsage(started)
      sealed.forEach((s, i) => assert.match(values(s)[0] ?? '', new RegExp(`^p${i} `)))
      const after = sealer.load()
      assert.equal(after.queuedBytes, 0)
      assert.equal(after.waitingBytes, 0)
      assert.equal(after.queuedBatches, 0)
      assert.deepEqual(
        after.threads.map((t) => t.batches),
        [3, 3, 3]
      )
      for (const t of after.threads) {
        assert.ok(t.cpuSeconds > 0 && t.busySeconds > 0 && t.idleSeconds >= 0, JSON.stringify(t))
      }
      // Every batch's CPU is its own thread's, since that thread's previous batch: the per-batch figures add up
      // to the per-thread sums, and (each thread measuring itself, not the process) to no more than the process used.
      // The kernel's own figure for each thread (found by its name) bounds what it reported.
      after.threads.forEach((t, i) => {
        const own = threadCpuByName(`compression-${i + 1}`)
        assert.ok(
          t.cpuSeconds <= own + 1e-9,
          `thread ${i + 1} reported ${t.cpuSeconds} s, the kernel says it used ${own} s in all`
        )
      })
      const perBatch = sealed.reduce((sum, s) => sum + s.compressCpuSeconds, 0)
      const perThread = after.threads.reduce((sum, t) => sum + t.cpuSeconds, 0)
      assert.ok(Math.abs(perBatch - perThread) < 1e-9, `${perBatch} = ${perThread}`)
      assert.ok(
        perThread <= (used.user + used.system) / 1e6 + 0.01,
        `no more than the whole process used (${perThread} s of ${(used.user + used.system) / 1e6} s)`
      )
    } finally {
      await sealer.close()
    }
  })
})
