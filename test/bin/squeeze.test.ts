import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'

const LAUNCHER = fileURLToPath(new URL('../../../bin/squeeze', import.meta.url))
const NODE_LAUNCHER = fileURLToPath(new URL('../../../bin/squeeze-node', import.meta.url))
const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { env: { ...process.env, KAFKA_BROKERS: '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
      }
    )
  })
}

/** A stand-in for node that prints the arguments it was given, one per line. */
function argumentPrinter(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'squeeze-launcher-')), 'node')
  writeFileSync(path, '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
  chmodSync(path, 0o755)
  return path
}

/**
 * The flags the launchers should add here: one V8 thread on a machine with one or two cores online, and 8 MB
 * semi-spaces everywhere.
 */
function expectedFlags(semiSpaceMb = 8): string[] {
  const online = readFileSync('/sys/devices/system/cpu/online', 'utf8').trim()
  return [...(online === '0' || online === '0-1' ? ['--v8-pool-size=1'] : []), `--max-semi-space-size=${semiSpaceMb}`]
}

describe('bin/squeeze', () => {
  it('runs the CLI on SQUEEZE_NODE', async () => {
    const result = await run(LAUNCHER, ['produce', '--help'], { SQUEEZE_NODE: process.execPath })
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /linger\.ms/)
  })

  it('passes every argument on as given, after the V8 flags this machine calls for', async () => {
    const result = await run(LAUNCHER, ['produce', '--file', 'a file with spaces.log', ''], {
      SQUEEZE_NODE: argumentPrinter(),
      NODE_OPTIONS: ''
    })
    assert.equal(result.code, 0, result.stderr)
    const args = result.stdout.split('\n').slice(0, -1)
    const flags = expectedFlags()
    assert.deepEqual(args.slice(0, flags.length), flags)
    assert.equal(realpathSync(resolve(args[flags.length] as string)), realpathSync(CLI))
    assert.deepEqual(args.slice(flags.length + 1), ['produce', '--file', 'a file with spaces.log', ''])
  })

  it('gives audit, which reads topic after topic, 2 MB semi-spaces, through either launcher', async () => {
    const env = { SQUEEZE_NODE: argumentPrinter(), NODE_OPTIONS: '' }
    const viaCli = await run(LAUNCHER, ['audit', '--topics', 'x'], env)
    assert.equal(viaCli.code, 0, viaCli.stderr)
    assert.deepEqual(viaCli.stdout.split('\n').slice(0, expectedFlags(2).length), expectedFlags(2))
    const viaNode = await run(NODE_LAUNCHER, ['cli.js', 'audit'], env)
    assert.equal(viaNode.code, 0, viaNode.stderr)
    assert.deepEqual(viaNode.stdout.split('\n').slice(0, -1), [...expectedFlags(2), 'cli.js', 'audit'])
  })

  it('leaves the pool size to NODE_OPTIONS when that sets one', async () => {
    const result = await run(LAUNCHER, ['--help'], {
      SQUEEZE_NODE: argumentPrinter(),
      NODE_OPTIONS: '--max-old-space-size=512 --v8-pool-size=3'
    })
    assert.equal(result.code, 0, result.stderr)
    assert.ok(!result.stdout.includes('--v8-pool-size'), result.stdout)
    assert.match(result.stdout, /^--max-semi-space-size=8$/m)
  })

  it("leaves the young generation's size to NODE_OPTIONS when that sets one", async () => {
    const result = await run(LAUNCHER, ['--help'], {
      SQUEEZE_NODE: argumentPrinter(),
      NODE_OPTIONS: '--max-semi-space-size=32'
    })
    assert.equal(result.code, 0, result.stderr)
    assert.ok(!result.stdout.includes('--max-semi-space-size'), result.stdout)
  })

  it('bin/squeeze-node runs a script with the same flags, and no CLI', async () => {
    const result = await run(NODE_LAUNCHER, ['some-client.js', '--passes', '2'], {
      SQUEEZE_NODE: argumentPrinter(),
      NODE_OPTIONS: ''
    })
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(result.stdout.split('\n').slice(0, -1), [...expectedFlags(), 'some-client.js', '--passes', '2'])
  })

  it("bin/squeeze-node's young generation stays at two 8 MB semi-spaces under a steady stream of garbage", async () => {
    // Without the flag, node 24 grew this new space to 32 MB here (node 26 to 12 MB).
    const churn =
      'let a = []; for (let i = 0; i < 3e6; i++) { a.push({ i }); if (a.length > 1e5) a = [] }' +
      'const s = require("node:v8").getHeapSpaceStatistics().find((x) => x.space_name === "new_space"); process.stdout.write(String(s.space_size))'
    const result = await run(NODE_LAUNCHER, ['-e', churn], { SQUEEZE_NODE: process.execPath, NODE_OPTIONS: '' })
    assert.equal(result.code, 0, result.stderr)
    const newSpaceBytes = Number(result.stdout)
    assert.ok(newSpaceBytes > 0 && newSpaceBytes <= 16 * 1024 * 1024, result.stdout)
  })

  it("finds the CLI through a symlink elsewhere, as npm links a package's bin", async () => {
    const link = join(mkdtempSync(join(tmpdir(), 'squeeze-bin-')), 'squeeze')
    symlinkSync(LAUNCHER, link)
    const result = await run(link, ['--help'], { SQUEEZE_NODE: process.execPath })
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /Usage: squeeze <command>/)
  })
})
