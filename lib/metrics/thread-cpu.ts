/**
 * CPU seconds used by the calling thread (getrusage RUSAGE_THREAD, through process.threadCpuUsage). Kernel
 * accounting for a running thread only advances at the scheduler's tick (4 ms here, HZ=250) or when it is switched
 * out, so one short interval reads 0 or a tick; over many intervals the sum is the CPU they took, on average. Use it
 * where other threads run beside the one measured, which process.cpuUsage() would also count.
 */
export function threadCpuSeconds(): number {
  const { user, system } = process.threadCpuUsage()
  return (user + system) / 1e6
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
