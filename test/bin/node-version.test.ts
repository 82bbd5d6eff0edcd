import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { isSupportedNode, SUPPORTED_NODE_RANGE, unsupportedNodeMessage } from '../../lib/service/node-version.js'

const LAUNCHER = fileURLToPath(new URL('../../../bin/squeeze', import.meta.url))
const PACKAGE = fileURLToPath(new URL('../../../package.json', import.meta.url))

function run(node: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      LAUNCHER,
      ['--help'],
      { env: { ...process.env, SQUEEZE_NODE: node }, timeout: 60_000 },
      (err, stdout, stderr) => {
        done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
      }
    )
  })
}

/** This node, reporting itself as Node `version` to the code it runs. */
function nodeClaiming(version: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'squeeze-old-node-')), 'node')
  const preload = `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"${version}"}})`
  writeFileSync(path, `#!/bin/sh\nexec "${process.execPath}" --import '${preload}' "$@"\n`)
  chmodSync(path, 0o755)
  return path
}

function assertOneLine(result: { code: number; stdout: string; stderr: string }, version: string): void {
  assert.equal(result.code, 2, result.stderr)
  assert.equal(result.stdout, '')
  assert.equal(result.stderr, `${unsupportedNodeMessage(version)}\n`)
  assert.match(result.stderr, /^squeeze runs on Node 24 \(>= 24\.22\.3\) or 26 \(>= 26\.12\.1\), not v20\.\d+\.\d+; /)
}

describe('bin/squeeze on an unsupported Node', () => {
  it('names the supported versions in one line and exits 2', async () => {
    assertOneLine(await run(nodeClaiming('20.20.2')), '20.20.2')
  })

  it("the machine's own /usr/bin/node, where it is an old one, gets the same line", async () => {
    const system = '/usr/bin/node'
    const version = existsSync(system)
      ? await new Promise<string>((done) =>
          execFile(system, ['-p', 'process.versions.node'], (_, out) => done(out.trim()))
        )
      : ''
    // Where the machine has no old node, the stand-in above is the only old one to run.
    const node = version !== '' && !isSupportedNode(version) ? system : nodeClaiming('20.20.2')
    const result = await run(node)
    assertOneLine(result, node === system ? version : '20.20.2')
  })

  it('supported: the lines package.json engines names, at or after their release', () => {
    const engines = (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { engines: { node: string } }).engines.node
    assert.equal(SUPPORTED_NODE_RANGE, engines)
    for (const v of ['24.22.3', '24.23.0', 'v26.12.1', '26.13.4']) assert.ok(isSupportedNode(v), v)
    for (const v of ['20.20.2', '22.11.0', '24.22.2', '24.1.9', '25.0.0', '26.12.0', '27.0.0'])
      assert.ok(!isSupportedNode(v), v)
  })
})
