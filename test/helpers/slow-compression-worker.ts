// A compression thread that can be throttled or killed: the test writes a delay per batch to a file and the thread
// waits that long before sealing each batch, as a machine whose compression cannot keep up would; or `exit`, and the
// thread exits (code 3) at its next batch, holding it, as one that crashed. A file, read per
// batch, because a busy thread never gets round to message events (a BroadcastChannel's would wait for the
// whole queue of batches), and the sealer gives the thread no port of the test's.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parentPort } from 'node:worker_threads'

const THROTTLE_FILE_ENV = 'SQUEEZE_TEST_COMPRESSION_THROTTLE_FILE'
const EXIT = 'exit'

export const SLOW_COMPRESSION_WORKER = new URL('./slow-compression-worker.js', import.meta.url)

/** The delay slow compression threads wait before each batch (0: none). Create it before the producer starts its thread. */
export function compressionThrottle(): { set(delayMs: number): void; kill(): void; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-throttle-'))
  const file = join(dir, 'delay-ms')
  writeFileSync(file, '0')
  // A worker thread starts with a copy of the environment as it is then.
  process.env[THROTTLE_FILE_ENV] = file
  return {
    set: (delayMs) => writeFileSync(file, String(delayMs)),
    kill: () => writeFileSync(file, EXIT),
    close: () => {
      delete process.env[THROTTLE_FILE_ENV]
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

if (parentPort !== null) {
  const file = process.env[THROTTLE_FILE_ENV]
  const pause = new Int32Array(new SharedArrayBuffer(4))
  const order = (): string => {
    try {
      return file === undefined ? '0' : readFileSync(file, 'utf8')
    } catch {
      return '0'
    }
  }
  // Registered before the real worker's listener, so each batch waits here first (without using CPU).
  parentPort.on('message', () => {
    const said = order()
    if (said === EXIT) process.exit(3)
    const ms = Number(said)
    if (ms > 0) Atomics.wait(pause, 0, 0, ms)
  })
  await import('../../lib/producer/compression-worker.js')
}
