import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'

/** The repository root (tests run from dist/test/services). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const SERVICES = join(ROOT, 'services')

/** Every relative import of a services/ source file that lands in another service's folder. */
function crossServiceImports(): string[] {
  const found: string[] = []
  for (const service of readdirSync(SERVICES, { withFileTypes: true })) {
    // The CLI dispatches to every command's main: the one service allowed to import the others.
    if (!service.isDirectory() || service.name === 'cli') continue
    const folder = join(SERVICES, service.name)
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(join(folder, file), 'utf8')
      for (const match of source.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const target = relative(SERVICES, resolve(folder, match[1] as string))
        const [first] = target.split(sep)
        if (!target.startsWith('..') && first !== service.name)
          found.push(`services/${service.name}/${file} imports ${match[1]}`)
      }
    }
  }
  return found
}

it('no service imports another service: shared code lives in lib/ (only services/cli dispatches to them)', () => {
  assert.deepEqual(crossServiceImports(), [])
})

it('every command main runs in the shared skeleton (runService or runOneShot), so it only parses flags and wires parts', () => {
  const mains = readdirSync(SERVICES, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'cli')
    .map((d) => d.name)
  const outside = mains.filter(
    (name) => !/\brun(Service|OneShot)\(/.test(readFileSync(join(SERVICES, name, 'main.ts'), 'utf8'))
  )
  assert.deepEqual(outside, [])
})
