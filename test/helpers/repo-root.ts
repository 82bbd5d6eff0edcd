import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The repository root, found upwards from this file, so a test finds files that ship beside the sources (schema,
 * fixtures, scripts) whether it runs from test/ (ts) or dist/test/ (compiled).
 */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the repository root (no package.json above the test helpers)')
    dir = parent
  }
  return dir
}
