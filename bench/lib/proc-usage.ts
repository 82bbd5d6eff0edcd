import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

let clockTicks: number | undefined

/** User+system CPU seconds of a running process, all its threads, from /proc/PID/stat. */
export function processCpuSeconds(pid: number): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which is in parentheses: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[14 - 3]) + Number(fields[15 - 3])) / clockTicks
}

/** User+system CPU seconds and peak RSS of a running process, from /proc (all its threads). */
export function procUsage(pid: number): { cpuSeconds: number; maxRssMb: number } {
  const hwmKb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  return { cpuSeconds: processCpuSeconds(pid), maxRssMb: hwmKb / 1024 }
}
