import { closeSync, openSync, readSync } from 'node:fs'

/**
 * CPU seconds used by the calling thread. Linux keeps each thread's on-CPU time in nanoseconds in
 * /proc/thread-self/schedstat; process.cpuUsage() would also count every other thread (the compression
 * worker, GC helpers, libuv), which is wrong as soon as compression runs beside the event loop.
 * Where schedstat is missing, falls back to process CPU time.
 */
export function threadCpuSeconds(): number {
  if (schedstat === undefined) schedstat = openSchedstat()
  if (schedstat !== null) {
    const n = readSync(schedstat, scratch, 0, scratch.length, 0)
    const text = scratch.toString('latin1', 0, n)
    const space = text.indexOf(' ')
    const nanos = Number(space === -1 ? text : text.slice(0, space))
    if (Number.isFinite(nanos)) return nanos / 1e9
  }
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

// Opened once per thread: /proc/thread-self resolves to the thread that opens it, and each worker thread
// loads its own copy of this module.
let schedstat: number | null | undefined
const scratch = Buffer.alloc(96)

function openSchedstat(): number | null {
  try {
    const fd = openSync('/proc/thread-self/schedstat', 'r')
    const n = readSync(fd, scratch, 0, scratch.length, 0)
    if (n > 0 && /^\d+ /.test(scratch.toString('latin1', 0, n))) return fd
    closeSync(fd)
  } catch {
    // not Linux, or /proc not mounted
  }
  return null
}
