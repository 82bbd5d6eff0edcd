import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { it } from 'node:test'

const LIFECYCLE = new URL('../../../lib/service/lifecycle.js', import.meta.url).href

it("runCommand exits with the command's code once it returns, its output whole, not running the timers a library left behind", () => {
  // A referenced timer (as a client library's reconnect or metadata timer) would keep a natural exit waiting.
  const script = `
    const { runCommand } = await import(${JSON.stringify(LIFECYCLE)})
    await runCommand(async () => {
      setTimeout(() => process.stdout.write('timer ran after the command\\n'), 300)
      process.stdout.write('x'.repeat(1 << 20))
      process.stderr.write('done\\n')
      return 3
    })
  `
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    maxBuffer: 4 << 20
  })
  assert.equal(child.status, 3, child.stderr)
  assert.equal(child.stdout, 'x'.repeat(1 << 20))
  assert.equal(child.stderr, 'done\n')
})
