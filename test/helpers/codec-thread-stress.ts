// Worker threads started and terminated over and over while they compress and decompress with the native codecs
// (squeeze-lz4 fast and HC, zstd-napi, snappy) and checksum with @node-rs/crc32, buffers transferred back as the
// compression pool does, and corrupt frames fed to every decoder. Run in a process of its own (test/lib/codecs/native-threads.test.ts), so a native
// crash (a state freed under a running call, a write past a buffer) is a signal the test reports, not a lost runner.
// Usage: node codec-thread-stress.js ROUNDS THREADS [SPECS]; prints one JSON line of counts on success.
import { createRequire } from 'node:module'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { createCodec, parseCodecSpec, type Codec } from '../../lib/codecs/index.js'
import { crc32c, crc32cTables } from '../../lib/protocol/crc32c.js'

interface Lz4Bindings {
  frameBound(inputLength: number): number
  compressFrame(input: Uint8Array, output: Uint8Array, level: number): number
  decompressBlock(block: Uint8Array, output: Uint8Array): number
}

const lz4 = createRequire(import.meta.url)('squeeze-lz4') as Lz4Bindings
const SPECS = ['lz4:1', 'lz4:9', 'lz4:12', 'zstd:3', 'snappy']
/** The specs to exercise, from the third argument (a comma-separated subset, as the workers are given it); all by default. */
const chosen = ((isMainThread ? process.argv[4] : (workerData as { specs: string }).specs) ?? SPECS.join(',')).split(
  ','
)
const CODECS: readonly Codec[] = chosen.map((text) => createCodec(parseCodecSpec(text)))
/** Counters shared by every thread: round trips checked, corrupt inputs refused with an Error, decoded anyway. */
const enum Count {
  RoundTrips,
  CorruptRefused,
  CorruptDecoded,
  Transferred
}

/** A small deterministic generator, so a failure replays from its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

const WORDS = [
  'GET',
  'POST',
  '/api/v1/orders',
  '200',
  '404',
  'Mozilla/5.0',
  'kafka',
  'broker-1',
  'INFO',
  'WARN',
  '127.0.0.1',
  '\n'
]

/** Log-like text (compresses), random bytes (stored raw), or both; up to ~200 KiB, so frames have several 64 KiB blocks. */
function input(next: () => number): Buffer {
  const size = Math.floor(next() ** 2 * 200_000)
  const out = Buffer.allocUnsafeSlow(size)
  const kind = Math.floor(next() * 3)
  for (let at = 0; at < size;) {
    if (kind === 0 || (kind === 2 && next() < 0.5)) at += out.write(`${WORDS[Math.floor(next() * WORDS.length)]} `, at)
    else out[at++] = Math.floor(next() * 256)
  }
  return out
}

/** A frame damaged as storage or a hostile client could: bytes flipped, cut short, lengths that lie. */
function corrupt(frame: Buffer, next: () => number): Buffer {
  const bad = Buffer.from(frame)
  switch (Math.floor(next() * 4)) {
    case 0:
      for (let i = 0; i < 1 + next() * 8 && bad.length > 0; i++) {
        const at = Math.floor(next() * bad.length)
        bad[at] = (bad[at] as number) ^ (1 + Math.floor(next() * 255))
      }
      return bad
    case 1:
      return bad.subarray(0, Math.floor(next() * bad.length))
    case 2:
      // A block (or frame) length word anywhere in the first bytes: the size claims of every format sit there.
      if (bad.length >= 11) bad.writeUInt32LE(Math.floor(next() * 2 ** 32), 7 + Math.floor(next() * 4))
      return bad
    default:
      return Buffer.from(Array.from({ length: Math.floor(next() * 512) }, () => Math.floor(next() * 256)))
  }
}

/** One round trip and one corrupt frame per codec, on whatever thread calls it. */
function exercise(next: () => number, counts: Int32Array, send?: (bytes: ArrayBuffer) => void): void {
  for (const codec of CODECS) {
    const plain = input(next)
    const frame =
      next() < 0.5 ? codec.compress(plain) : Buffer.from(codec.compressTransient?.(plain) ?? codec.compress(plain))
    if (!codec.decompress(frame).equals(plain))
      throw new Error(`${codec.name}:${codec.level} round trip differs (${plain.length} bytes)`)
    // The batch checksum every compression thread computes (@node-rs/crc32), against the JS tables.
    if (crc32c(frame) !== crc32cTables(frame))
      throw new Error(`crc32c of a ${frame.length}-byte frame differs from the tables'`)
    Atomics.add(counts, Count.RoundTrips, 1)
    try {
      codec.decompress(corrupt(frame, next))
      Atomics.add(counts, Count.CorruptDecoded, 1)
    } catch (err) {
      if (!(err instanceof Error))
        throw new Error(`${codec.name} threw a non-Error on a corrupt frame: ${String(err)}`, { cause: err })
      Atomics.add(counts, Count.CorruptRefused, 1)
    }
    if (send !== undefined) {
      const owned = Buffer.allocUnsafeSlow(frame.length)
      frame.copy(owned)
      send(owned.buffer as ArrayBuffer)
    }
  }
  if (CODECS.some((c) => c.name === 'lz4')) lz4Lies(next)
}

/** The binding's own contract on lies: an output shorter than the block decodes to, a block cut short. */
function lz4Lies(next: () => number): void {
  const plain = input(next).subarray(0, 65_536)
  const out = Buffer.allocUnsafe(lz4.frameBound(plain.length))
  const length = lz4.compressFrame(plain, out, 1 + Math.floor(next() * 12))
  const word = length > 15 ? out.readUInt32LE(7) : 0
  if (word > 0 && (word & 0x80000000) === 0) {
    const block = out.subarray(11, 11 + word)
    if (plain.length > 0 && lz4.decompressBlock(block, Buffer.allocUnsafe(plain.length - 1)) !== -1)
      throw new Error('decompressBlock wrote past a short output')
    lz4.decompressBlock(block.subarray(0, Math.floor(next() * block.length)), Buffer.allocUnsafe(plain.length))
  }
}

if (!isMainThread) {
  const { counts, seed } = workerData as { counts: Int32Array; seed: number }
  const next = random(seed)
  const port = parentPort
  // Never yields to the event loop: terminate() lands while the thread is inside a native call or between two.
  for (;;) exercise(next, counts, (bytes) => port?.postMessage(bytes, [bytes]))
} else {
  const rounds = Number(process.argv[2] ?? 20)
  const threads = Number(process.argv[3] ?? 3)
  const counts = new Int32Array(new SharedArrayBuffer(4 * 4))
  const next = random(Number(process.env.SQUEEZE_STRESS_SEED ?? 1))
  let received = 0
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      Array.from({ length: threads }, async (_, i) => {
        const worker = new Worker(new URL(import.meta.url), {
          workerData: { counts, seed: round * threads + i + 1, specs: chosen.join(',') }
        })
        worker.on('error', (err) => {
          process.stderr.write(`worker error: ${err.stack ?? String(err)}\n`)
          process.exit(1)
        })
        // Frames that arrive from a thread being terminated must still decode: their memory moved to this thread.
        const busy = new Promise((resolve) =>
          worker.on('message', (bytes: ArrayBuffer) => {
            received += bytes.byteLength
            Atomics.add(counts, Count.Transferred, 1)
            resolve(undefined)
          })
        )
        await busy
        // This thread compresses meanwhile too, then ends the worker at a random point of its work.
        const stopAt = Date.now() + next() * 60
        do {
          exercise(next, counts)
          await new Promise((resolve) => setImmediate(resolve))
        } while (Date.now() < stopAt)
        await worker.terminate()
      })
    )
  }
  process.stdout.write(
    `${JSON.stringify({ rounds, threads, roundTrips: counts[Count.RoundTrips], corruptRefused: counts[Count.CorruptRefused], corruptDecoded: counts[Count.CorruptDecoded], transferred: counts[Count.Transferred], receivedBytes: received })}\n`
  )
}
