import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

/** Live java processes whose command line names `dir` (the embedded broker's data dir). */
function javaProcessesUsing(dir: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let argv: string[]
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
    } catch {
      continue // exited while we looked
    }
    if ((argv[0] ?? '').endsWith('java') && argv.some((a) => a.includes(dir))) pids.push(Number(entry))
  }
  return pids
}

async function waitUntil(what: string, ms: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('squeeze compare on the embedded broker', () => {
  it('Ctrl-C during the copy step prints a partial report, exits 0 or 1, and leaves no JVM behind', async () => {
    // Its own process group, so the SIGINT below reaches compare and everything it started, as a terminal's Ctrl-C does.
    const child = spawn(
      process.execPath,
      [
        CLI,
        'compare',
        '--wide',
        '--source',
        'generate',
        '--kind',
        'syslog',
        '--records',
        '400000',
        '--targets',
        'none,gzip:9',
        '--log-level',
        'info'
      ],
      {
        env: { ...process.env, KAFKA_BROKERS: '', SQUEEZE_NO_TESTCONTAINERS: '1' },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    let exitCode: number | null | undefined
    void exited.then((code) => {
      exitCode = code
    })
    let dataDir: string | undefined
    try {
      await waitUntil('the "copy started" log line', 240_000, () => {
        if (exitCode !== undefined) throw new Error(`compare exited (${exitCode}) before the copy started:\n${stderr}`)
        return stderr.includes('"msg":"copy started"')
      })
      dataDir = /embedded Kafka .* data (\S+?)"/.exec(stderr)?.[1]
      assert.ok(dataDir !== undefined, `the broker's data dir in the log:\n${stderr}`)
      assert.ok(javaProcessesUsing(dataDir).length > 0, 'the embedded broker runs while compare copies')
      process.kill(-(child.pid as number), 'SIGINT')
      const code = await exited
      assert.ok(code === 0 || code === 1, `exit code ${code}:\n${stderr.slice(-3000)}`)
      assert.match(stdout, /^PARTIAL: the copy was stopped/m, `stdout:\n${stdout}\nstderr:\n${stderr.slice(-3000)}`)
      assert.match(stdout, /^target\s+records\s+batches/m, 'the results table')
      assert.match(stdout, /^recommendation: /m)
      const copied = /^\s*none\s+(\d+)\s/m.exec(stdout)
      assert.ok(copied !== null && Number(copied[1]) < 400_000, `not every record copied:\n${stdout}`)
      const dir = dataDir
      await waitUntil(`no java process using ${dir}`, 30_000, () => javaProcessesUsing(dir).length === 0)
      await waitUntil(`${dir} removed`, 30_000, () => !existsSync(dir))
    } finally {
      if (exitCode === undefined) process.kill(-(child.pid as number), 'SIGKILL')
      for (const pid of dataDir === undefined ? [] : javaProcessesUsing(dataDir)) process.kill(pid, 'SIGKILL')
    }
  })
})
