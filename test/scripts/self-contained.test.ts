import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { after, describe, it } from 'node:test'
import { CORPUS_FIXTURES } from '../helpers/corpus.js'
import { repoRoot } from '../helpers/repo-root.js'

/** A path into the shared folder beside the checkout (as a string or as path.join parts), or its absolute form on the build machines. */
const OUTSIDE_REPO = /(\.\.\/|\/work\/)shared\b|['"]\.\.['"],\s*['"]shared['"]/

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    return e.isDirectory() ? filesUnder(path) : e.isFile() ? [path] : []
  })
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}

it('no file the tests, their scripts or the services use points outside the repository', () => {
  const root = repoRoot()
  const offenders = ['test', 'scripts', 'lib', 'services', '.ci']
    .flatMap((d) => filesUnder(join(root, d)))
    .filter((f) => OUTSIDE_REPO.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f))
  assert.deepEqual(offenders, [])
})

describe('scripts/clean-clone.sh (what CI=true npm test runs the suite in)', () => {
  const work = mkdtempSync(join(tmpdir(), 'squeeze-clean-clone-'))
  after(() => rmSync(work, { recursive: true, force: true }))
  const origin = join(work, 'origin')
  const git = (cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    run('git', ['-c', 'user.name=squeeze-test', '-c', 'user.email=test@squeeze.invalid', ...args], cwd)

  it('clones the committed HEAD, fixtures and all, into a folder with no shared/ beside it', async () => {
    // A checkout of this commit with the scripts as they are on disk, committed, so the scripts under test are these.
    assert.equal((await run('git', ['clone', '--quiet', repoRoot(), origin], work)).code, 0)
    for (const s of ['clean-clone.sh', 'test.sh'])
      copyFileSync(join(repoRoot(), 'scripts', s), join(origin, 'scripts', s))
    await git(origin, 'add', 'scripts')
    await git(origin, 'commit', '--quiet', '-m', 'scripts under test')
    const head = (await git(origin, 'rev-parse', 'HEAD')).stdout.trim()

    const dest = join(work, 'fresh', 'squeeze')
    const cloned = await run('bash', [join(origin, 'scripts', 'clean-clone.sh'), dest], origin)
    assert.equal(cloned.code, 0, cloned.stderr)
    assert.equal(cloned.stdout.trim(), dest)
    assert.equal((await git(dest, 'rev-parse', 'HEAD')).stdout.trim(), head)
    assert.deepEqual(readdirSync(dirname(dest)), ['squeeze'], 'the clone has nothing beside it')
    for (const { file } of CORPUS_FIXTURES) {
      assert.equal(
        statSync(join(dest, 'test', 'fixtures', 'corpus', file)).size,
        statSync(join(repoRoot(), 'test', 'fixtures', 'corpus', file)).size,
        file
      )
    }
  })

  it('CI=true npm test refuses a dirty tree instead of silently testing without the local changes', async () => {
    writeFileSync(join(origin, 'lib', 'not-committed.ts'), 'export const x = 1\n')
    const refused = await run('bash', [join(origin, 'scripts', 'test.sh')], origin, {
      ...process.env,
      CI: 'true',
      SQUEEZE_TEST_CLONE_OF: ''
    })
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /clean-clone: refusing: the working tree has uncommitted or untracked files/)
    assert.match(refused.stderr, /lib\/not-committed\.ts/)
    // Refused before anything was installed or built.
    assert.equal(existsSync(join(origin, 'node_modules')), false)
    assert.equal(existsSync(join(origin, 'dist')), false)
  })
})
