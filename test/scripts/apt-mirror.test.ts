import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { repoRoot } from '../helpers/repo-root.js'

const SCRIPT = join(repoRoot(), 'scripts', 'apt-mirror.sh')
const roots: string[] = []

after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

/** An /etc/apt stand-in holding `files` (path under it -> content). */
function aptRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'squeeze-apt-'))
  roots.push(root)
  mkdirSync(join(root, 'sources.list.d'))
  for (const [path, content] of Object.entries(files)) writeFileSync(join(root, path), content)
  return root
}

function mirror(root: string, suite = 'bookworm'): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync('bash', [SCRIPT, suite], { env: { ...process.env, SQUEEZE_APT_ROOT: root }, encoding: 'utf8' })
  return { code: run.status, stdout: run.stdout.trim(), stderr: run.stderr.trim() }
}

const DEB822 = `Types: deb
# a snapshot this machine does not use
URIs: http://mirror.example.net/debian/
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.net/debian-security
Suites: bookworm-security
Components: main
`

describe('scripts/apt-mirror.sh: the Debian mirror from the machine’s apt sources', () => {
  it('reads a deb822 .sources file, without the trailing slash', () => {
    assert.deepEqual(mirror(aptRoot({ 'sources.list.d/debian.sources': DEB822 })), {
      code: 0,
      stdout: 'http://mirror.example.net/debian',
      stderr: ''
    })
  })

  it('reads a one-line sources.list, skipping deb-src, comments, other suites and [options]', () => {
    const list = [
      '# deb http://commented.example/debian bookworm main',
      'deb-src http://source.example/debian bookworm main',
      'deb http://security.example/debian-security bookworm-security main',
      'deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://list.example/debian bookworm main contrib'
    ].join('\n')
    assert.equal(mirror(aptRoot({ 'sources.list': `${list}\n` })).stdout, 'http://list.example/debian')
  })

  it('reads sources.list, then sources.list.d in name order, skipping disabled stanzas and other file names', () => {
    const root = aptRoot({
      'sources.list.d/a.sources': DEB822.replace('Components: main', 'Components: main\nEnabled: no'),
      'sources.list.d/b.list.disabled': 'deb http://disabled.example/debian bookworm main\n',
      'sources.list.d/c.list': 'deb http://c.example/debian bookworm main\n',
      'sources.list.d/d.list': 'deb http://d.example/debian bookworm main\n'
    })
    assert.equal(mirror(root).stdout, 'http://c.example/debian')
    writeFileSync(join(root, 'sources.list'), 'deb http://first.example/debian bookworm main\n')
    assert.equal(mirror(root).stdout, 'http://first.example/debian')
  })

  it('reads a continued URIs field and the suite asked for', () => {
    const root = aptRoot({
      'sources.list.d/t.sources': 'Types: deb deb-src\nURIs:\n http://t.example/debian\nSuites: trixie\n'
    })
    assert.equal(mirror(root, 'trixie').stdout, 'http://t.example/debian')
  })

  it('fails with one line naming the suite when no source serves it', () => {
    const run = mirror(aptRoot({ 'sources.list.d/debian.sources': DEB822 }), 'trixie')
    assert.equal(run.code, 1)
    assert.equal(run.stdout, '')
    assert.match(run.stderr, /^apt-mirror: no enabled deb source for Debian trixie in .*$/)
  })
})
