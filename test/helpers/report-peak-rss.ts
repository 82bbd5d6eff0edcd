/**
 * Preloaded with `node --import` into a child the test measures: at exit, writes the process's peak resident set
 * (VmHWM, the kernel's own high-water mark) in bytes to the file SQUEEZE_PEAK_RSS_FILE names.
 */
import { readFileSync, writeFileSync } from 'node:fs'

const file = process.env.SQUEEZE_PEAK_RSS_FILE
if (file !== undefined && file !== '') {
  process.on('exit', () => {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    if (kib !== undefined) writeFileSync(file, String(Number(kib) * 1024))
  })
}
