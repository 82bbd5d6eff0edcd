import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { repoRoot } from '../helpers/repo-root.js'

const SCRIPT = join(repoRoot(), 'scripts', 'bench-peers.sh')

function run(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', [SCRIPT], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}

describe('scripts/bench-peers.sh', () => {
  const work = mkdtempSync(join(tmpdir(), 'squeeze-bench-peers-'))
  after(() => rmSync(work, { recursive: true, force: true }))

  /**
   * An npm that behaves as npm 11 does with an unapproved install script: exit 0, script skipped, no addon built.
   * It records its arguments, so the test also sees that no `--allow-scripts` flag (refused in project installs) is passed.
   */
  function fakeNpm(): string {
    const bin = join(work, 'bin')
    mkdirSync(bin, { recursive: true })
    writeFileSync(
      join(bin, 'npm'),
      `#!/usr/bin/env bash
if [ "$1" = --version ]; then echo 11.19.1; exit 0; fi
echo "$@" >> "${join(work, 'npm-args')}"
mkdir -p node_modules/@confluentinc/kafka-javascript
echo "npm warn install-scripts skipped for 1 package"
exit 0
`
    )
    chmodSync(join(bin, 'npm'), 0o755)
    return bin
  }

  it("fails loudly when npm leaves the peer unbuilt, and relies on the peers' package.json allowScripts", async () => {
    const peers = join(work, 'peers')
    const r = await run({ PATH: `${fakeNpm()}:${process.env['PATH'] ?? ''}`, BENCH_PEERS_DIR: peers, BENCH_SKIP: '' })
    assert.equal(r.code, 1)
    assert.match(
      r.stderr,
      /bench: @confluentinc\/kafka-javascript did not build; last lines of .*install\.log:\n {2}npm warn install-scripts skipped/
    )
    assert.match(r.stderr, /set BENCH_SKIP=confluent to run the benchmarks without its rows/)
    const args = readFileSync(join(work, 'npm-args'), 'utf8')
    assert.match(args, /^install /)
    assert.doesNotMatch(args, /allow-scripts/)
    const pkg = JSON.parse(readFileSync(join(peers, 'package.json'), 'utf8')) as {
      allowScripts: Record<string, boolean>
    }
    assert.deepEqual(pkg.allowScripts, { '@confluentinc/kafka-javascript': true })
  })

  it('BENCH_SKIP=confluent leaves the peer out without installing anything', async () => {
    const peers = join(work, 'skipped')
    const r = await run({ BENCH_PEERS_DIR: peers, BENCH_SKIP: 'kcat,confluent' })
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stderr, /BENCH_SKIP=confluent: @confluentinc\/kafka-javascript is left out/)
    assert.equal(existsSync(peers), false)
  })
})
