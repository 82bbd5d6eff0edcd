import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'

const LIFECYCLE = new URL('../../../lib/service/lifecycle.js', import.meta.url).href
const LOGGER = new URL('../../../lib/log/logger.js', import.meta.url).href

/**
 * A command that writes its report and log lines while it works, in a child whose stdout (and, with `closeStderr`,
 * stderr) the reader closes at once: as `squeeze produce ... | head -1` does, or a collector that restarts.
 */
async function runWithClosedOutput(
  closeStderr: boolean
): Promise<{ code: number | null; stderr: string; marker: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-closed-output-'))
  const marker = join(dir, 'finished')
  const script = `
    const { writeFileSync } = await import('node:fs')
    const { runCommand } = await import(${JSON.stringify(LIFECYCLE)})
    const { createLogger } = await import(${JSON.stringify(LOGGER)})
    await runCommand(async () => {
      const log = createLogger({ name: 'closed-output-test' })
      for (let i = 0; i < 40; i++) {
        process.stdout.write('report line '.repeat(2000) + '\\n')
        log.info({ i }, 'still working')
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      writeFileSync(${JSON.stringify(marker)}, 'flushed')
      return 0
    })
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.destroy()
  let stderr = ''
  if (closeStderr) child.stderr.destroy()
  else child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
  let written = ''
  try {
    written = readFileSync(marker, 'utf8')
  } catch {
    // Left empty: the command did not get to the end.
  }
  return { code, stderr, marker: written }
}

it('a command whose stdout reader goes away carries on to the end and exits 0, no stack trace', async () => {
  const run = await runWithClosedOutput(false)
  assert.equal(run.marker, 'flushed', run.stderr)
  assert.equal(run.code, 0, run.stderr)
  assert.doesNotMatch(run.stderr, /EPIPE|Error|at /)
  assert.match(run.stderr, /still working/)
})

it('a command whose stdout and stderr (its log) readers both go away carries on to the end and exits 0', async () => {
  const run = await runWithClosedOutput(true)
  assert.equal(run.marker, 'flushed')
  assert.equal(run.code, 0)
})
