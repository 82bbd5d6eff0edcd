import { createRequire } from 'node:module'

interface ClockBinding {
  threadCpuSeconds?: () => number
}

const require = createRequire(import.meta.url)
/** The binding's clock, loaded on the first reading (not at import: a run loads a codec's library only to compress). */
let nativeClock: (() => number) | null | undefined

function clock(): (() => number) | null {
  if (nativeClock === undefined) {
    // The clock lives in squeeze's one native binding (native/squeeze-lz4); a build from before it has none.
    const read = (require('squeeze-lz4') as ClockBinding).threadCpuSeconds
    nativeClock = read !== undefined && read() >= 0 ? read : null
  }
  return nativeClock
}

/**
 * CPU seconds used by the calling thread, from the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, through the native
 * binding): the kernel brings a running thread's time up to date for it, so a short interval, such as one batch's
 * decompression, reads what it took. Without the binding's clock: getrusage RUSAGE_THREAD (process.threadCpuUsage),
 * whose figure for a running thread only advances at the scheduler's tick or when the thread is switched out, so a
 * short interval reads 0 or a tick and only a sum over many intervals is right, on average. Use it where other
 * threads run beside the one measured, which process.cpuUsage() would also count.
 */
export function threadCpuSeconds(): number {
  const read = clock()
  if (read !== null) return read()
  const { user, system } = process.threadCpuUsage()
  return (user + system) / 1e6
}

/** Whether threadCpuSeconds reads the thread's precise CPU clock (the native binding's). */
export function threadCpuClockIsPrecise(): boolean {
  return clock() !== null
}

/**
 * CPU seconds used by the whole process (getrusage RUSAGE_SELF): exact to the microsecond for a short interval, as
 * the kernel brings the running thread's time up to date first, but it counts every thread. Use it where nothing
 * else runs meanwhile.
 */
export function processCpuSeconds(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}
