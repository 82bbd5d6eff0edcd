import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { repoRoot } from '../helpers/repo-root.js'

const ROOT = repoRoot()

/** Runs a tool of node_modules/.bin from the repository root on `source`, given as the file `path`. */
function tool(name: string, args: readonly string[], source: string): { code: number | null; stdout: string } {
  const run = spawnSync(join(ROOT, 'node_modules', '.bin', name), args, {
    cwd: ROOT,
    input: source,
    encoding: 'utf8',
    timeout: 120_000
  })
  return { code: run.status, stdout: run.stdout }
}

const eslint = (path: string, source: string): { code: number | null; stdout: string } =>
  tool('eslint', ['--max-warnings', '0', '--stdin', '--stdin-filename', path], source)
const prettier = (path: string, source: string): string => tool('prettier', ['--stdin-filepath', path], source).stdout

const CLEAN = `import { type Logger } from '../log/logger.js'

export function describe(log: Logger, value: unknown): string {
  const text = value === null ? 'null' : String(value)
  log.info({ text }, 'described')
  return text
}
`

describe('lint and format (scripts/lint.sh, run by npm test)', () => {
  it('scripts/test.sh runs scripts/lint.sh, which runs ESLint and Prettier over the tree', () => {
    assert.match(readFileSync(join(ROOT, 'scripts', 'test.sh'), 'utf8'), /^bash scripts\/lint\.sh$/m)
    const lint = readFileSync(join(ROOT, 'scripts', 'lint.sh'), 'utf8')
    assert.match(lint, /^npx eslint --max-warnings 0 \.$/m)
    assert.match(lint, /^npx prettier --check /m)
  })

  it('a clean file passes both', () => {
    assert.deepEqual(eslint('lib/planted.ts', CLEAN), { code: 0, stdout: '' })
    assert.equal(prettier('lib/planted.ts', CLEAN), CLEAN)
  })

  it('ESLint fails on planted violations: code compiled from a string, ==, an unused variable', () => {
    const planted = CLEAN.replace(
      "  const text = value === null ? 'null' : String(value)",
      "  const unused = new Function('return 1')\n  const text = value == 0 ? 'null' : String(value)"
    )
    const run = eslint('lib/planted.ts', planted)
    assert.equal(run.code, 1)
    for (const rule of ['no-new-func', 'eqeqeq', '@typescript-eslint/no-unused-vars'])
      assert.ok(run.stdout.includes(rule), rule)
  })

  it('Prettier rewrites a planted line longer than 120 characters, a semicolon and double quotes', () => {
    const fields = "first: 'a-rather-long-field-value', second: 'another-rather-long-field-value', third: 'one-more'"
    const long = `  log.info({ text, ${fields} }, 'described');`
    assert.ok(long.length > 120)
    const planted = CLEAN.replace("  log.info({ text }, 'described')", long).replace("'null'", '"null"')
    const formatted = prettier('lib/planted.ts', planted)
    assert.notEqual(formatted, planted)
    assert.ok(formatted.split('\n').every((line) => line.length <= 120))
    assert.equal(formatted.includes(';'), false)
    assert.equal(formatted.includes('"null"'), false)
  })
})
