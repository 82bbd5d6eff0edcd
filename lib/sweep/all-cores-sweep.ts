import { Worker } from 'node:worker_threads'
import { formatCodecSpec, type CodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { median, type BatchSet } from './codec-sweep.js'
import type { AllCoresInit, AllCoresReply } from './all-cores-worker.js'

const WORKER_URL = new URL('./all-cores-worker.js', import.meta.url)

/** Every target over the same batches on every core at once: what the cores deliver when all compress together. */
export interface AllCoresSweep {
  readonly threads: number
  readonly rounds: number
  /** Whether each round also decompressed every batch it compressed (the projection's read-back). */
  readonly readBack: boolean
  /** Median over rounds of one round's wall time, from the start signal to the last thread done. */
  readonly wallSeconds: number
  /** Records-section bytes one thread compresses per round with each target. */
  readonly sectionBytesPerThread: number
  /** Per target, MB of records sections per CPU second of its thread while every thread compresses: median over threads and rounds. */
  readonly compressMBPerCpuSecond: ReadonlyMap<string, number>
  /** Per target, the same for decompressing them back; empty without readBack. */
  readonly decompressMBPerCpuSecond: ReadonlyMap<string, number>
  /** Per target, the compressed records sections (the same on every thread: they compress the same bytes). */
  readonly compressedBytes: ReadonlyMap<string, number>
}

/**
 * Starts `threads` worker threads, each with its own copy of the batches, and has all of them compress every
 * batch with every target in `rounds` rounds that start together. Each thread begins at a different target (as
 * the projection spreads targets over its threads), and a round ends when the last thread is done, so cores
 * slowed by each other (shared caches, memory bandwidth) or by other processes count, as they do for the projection.
 * With `readBack`, each thread decompresses every batch right after compressing it with a target, as the projection
 * does to measure decompression: the codec work a projection of that target set cannot do without.
 */
export async function sweepAllCores(
  batches: BatchSet,
  specs: readonly CodecSpec[],
  options: { readonly threads: number; readonly rounds: number; readonly readBack?: boolean }
): Promise<AllCoresSweep> {
  const { threads, rounds } = options
  const readBack = options.readBack ?? false
  if (!Number.isInteger(threads) || threads < 1 || !Number.isInteger(rounds) || rounds < 1) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `threads and rounds must be whole numbers >= 1, got ${threads} and ${rounds}`
    )
  }
  const sectionBytes = batches.sections.reduce((n, s) => n + s.length, 0)
  const data = new SharedArrayBuffer(Math.max(sectionBytes, 1))
  const view = Buffer.from(data)
  let at = 0
  for (const s of batches.sections) at += s.copy(view, at)
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const workers = Array.from({ length: threads }, () => new Worker(WORKER_URL))
  try {
    const replies = workers.map(inbox)
    workers.forEach((worker, index) => {
      const init: AllCoresInit = {
        data,
        lengths: batches.sections.map((s) => s.length),
        specs,
        first: Math.floor((index * specs.length) / threads),
        rounds,
        readBack,
        signal: signal.buffer as SharedArrayBuffer
      }
      worker.postMessage(init)
    })
    const ready = await Promise.all(replies.map((r) => r.next('ready')))
    const walls: number[] = []
    const speeds = new Map<string, number[]>(specs.map((s) => [formatCodecSpec(s), []]))
    const decompressSpeeds = new Map<string, number[]>(readBack ? specs.map((s) => [formatCodecSpec(s), []]) : [])
    const speed = (cpu: number): number => (cpu > 0 ? sectionBytes / 1e6 / cpu : Number.POSITIVE_INFINITY)
    for (let round = 1; round <= rounds; round++) {
      const startedAt = performance.timeOrigin + performance.now()
      Atomics.store(signal, 0, round)
      Atomics.notify(signal, 0)
      const done = await Promise.all(replies.map((r) => r.next('round')))
      walls.push((Math.max(...done.map((d) => d.endedAt)) - startedAt) / 1000)
      for (const d of done) {
        for (const [target, cpu] of Object.entries(d.cpuSeconds)) speeds.get(target)?.push(speed(cpu))
        for (const [target, cpu] of Object.entries(d.decompressCpuSeconds))
          decompressSpeeds.get(target)?.push(speed(cpu))
      }
    }
    return {
      threads,
      rounds,
      readBack,
      wallSeconds: median(walls),
      sectionBytesPerThread: sectionBytes,
      compressMBPerCpuSecond: new Map([...speeds].map(([target, list]) => [target, median(list)])),
      decompressMBPerCpuSecond: new Map([...decompressSpeeds].map(([target, list]) => [target, median(list)])),
      compressedBytes: new Map(Object.entries(ready[0]?.compressedBytes ?? {}))
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()))
  }
}

/**
 * The wall time the target set would take over `sectionBytes` of records sections on the sweep's cores: its
 * rounds compressed (and with readBack decompressed) sectionBytesPerThread × threads with every target in wallSeconds.
 */
export function allCoresBoundSeconds(sweep: AllCoresSweep, sectionBytes: number): number {
  return sweep.sectionBytesPerThread === 0
    ? 0
    : (sweep.wallSeconds * sectionBytes) / (sweep.sectionBytesPerThread * sweep.threads)
}

type Reply = Exclude<AllCoresReply, { readonly error: string }>

/** A worker's replies in order; an error or an early exit fails the next one. */
function inbox(worker: Worker): { next<K extends Reply['kind']>(kind: K): Promise<Extract<Reply, { kind: K }>> } {
  const queued: Reply[] = []
  const waiting: Array<{ resolve: (r: Reply) => void; reject: (err: Error) => void }> = []
  let failure: Error | null = null
  const fail = (err: Error): void => {
    failure ??= err
    for (const w of waiting.splice(0)) w.reject(err)
  }
  worker.on('message', (reply: AllCoresReply) => {
    if ('error' in reply)
      return fail(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `the all-cores sweep failed: ${reply.error}`))
    const w = waiting.shift()
    if (w === undefined) queued.push(reply)
    else w.resolve(reply)
  })
  worker.on('error', (err) =>
    fail(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `an all-cores sweep thread failed: ${err.message}`, { cause: err }))
  )
  worker.on('exit', (code) =>
    fail(new SqueezeError(ErrorCodes.CODEC_CORRUPT, `an all-cores sweep thread exited with code ${code}`))
  )
  const take = (): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const reply = queued.shift()
      if (reply !== undefined) resolve(reply)
      else if (failure !== null) reject(failure)
      else waiting.push({ resolve, reject })
    })
  return {
    next: async <K extends Reply['kind']>(kind: K) => {
      const reply = await take()
      if (reply.kind !== kind)
        throw new SqueezeError(ErrorCodes.CODEC_CORRUPT, `the all-cores sweep expected ${kind}, got ${reply.kind}`)
      return reply as Extract<Reply, { kind: K }>
    }
  }
}
