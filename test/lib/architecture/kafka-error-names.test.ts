import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { it } from 'node:test'
import { repoRoot } from '../../helpers/repo-root.js'

const ROOT = repoRoot()

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

// A Kafka error code compared as a bare number: `errorCode === 0`, or a number whose comment names the error.
const BARE_CODE = /\berrorCode\s*[!=]==?\s*-?\d+|[!=]==?\s*-?\d+\s*\/\*\s*[A-Z][A-Z_]{3,}\s*\*\//

it('lib/ and services/ name Kafka error codes (KafkaErrorCode.OFFSET_OUT_OF_RANGE), never compare bare numbers', () => {
  const bare = ['lib', 'services']
    .flatMap((top) => sources(join(ROOT, top)))
    .filter((file) => !file.endsWith(join('kafka', 'error-codes.ts')))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (BARE_CODE.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : []))
    )
  assert.ok(sources(join(ROOT, 'lib')).length > 50, 'finds the sources it checks')
  assert.deepEqual(bare, [])
})
