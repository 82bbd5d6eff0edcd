import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const PROTECTOR = fileURLToPath(new URL('../../lib/detach-protector.js', import.meta.url))
const COMPRESSION_WORKER = new URL('../../lib/producer/compression-worker.js', import.meta.url).href
/** What V8 prints, under --trace-protector-invalidation, the first time an ArrayBuffer in the isolate is detached. */
const INVALIDATED = 'Invalidating protector cell ArrayBufferDetaching'

/** stdout of `node --trace-protector-invalidation ...args`: V8's trace and the program's own output, in order. */
function traced(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--trace-protector-invalidation', ...args],
      { env: { ...process.env, KAFKA_BROKERS: '' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`${err.message}\n${stderr}`))
        else resolve(stdout)
      }
    )
  })
}

function assertInvalidatedBefore(stdout: string, marker: string): void {
  const at = stdout.indexOf(INVALIDATED)
  assert.ok(at >= 0, `V8 never reported a detached ArrayBuffer:\n${stdout}`)
  assert.ok(at < stdout.indexOf(marker), `the protector was invalidated after ${JSON.stringify(marker)}:\n${stdout}`)
  assert.equal(stdout.split(INVALIDATED).length, 2, 'invalidated more than once in one thread')
}

describe('settleDetachProtector', () => {
  it('detaches a buffer, so V8 drops its detached-buffer assumption there and then', async () => {
    const script = `const { settleDetachProtector } = await import(${JSON.stringify(PROTECTOR)})
console.log('before'); settleDetachProtector(); console.log('after')`
    const stdout = await traced(['--input-type=module', '-e', script])
    const at = stdout.indexOf(INVALIDATED)
    assert.ok(stdout.indexOf('before') < at && at < stdout.indexOf('after'), stdout)
  })

  it("runs in the CLI before any command's code", async () => {
    assertInvalidatedBefore(await traced([CLI, 'produce', '--help']), 'Usage')
  })

  it('runs on a compression thread before it says it is ready', async () => {
    // This process detaches nothing itself, so the one report comes from the thread (V8's flags are process-wide;
    // execArgv: [] keeps --input-type from the thread).
    const script = `import { Worker } from 'node:worker_threads'
const worker = new Worker(new URL(${JSON.stringify(COMPRESSION_WORKER)}), { execArgv: [], workerData: { thread: 1, preload: [] } })
worker.on('message', (m) => { if (m.ready === true) { console.log('ready'); process.exit(0) } })`
    assertInvalidatedBefore(await traced(['--input-type=module', '-e', script]), 'ready')
  })
})
