import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { describe, it } from 'node:test'
import { repoRoot } from '../../helpers/repo-root.js'

// Reads the TypeScript sources (type-only imports count: they tie the layers too), found from the repo root.

const ROOT = repoRoot()
const LIB = join(ROOT, 'lib')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every file's relative imports (`from './x.js'`, `import('./x.js')`), as the .ts files they name. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sources(LIB)) {
    const text = readFileSync(file, 'utf8')
    const targets = [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) =>
      resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts'))
    )
    graph.set(file, targets)
  }
  return graph
}

/** The same imports between lib/'s top folders (a file directly in lib/ is a node of its own); imports inside a folder drop out. */
function folderGraph(files: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const folder = (file: string): string => join(LIB, relative(LIB, file).split(sep)[0] as string)
  const graph = new Map<string, string[]>()
  for (const [file, targets] of files) {
    const from = folder(file)
    const edges = graph.get(from) ?? []
    for (const to of targets.map(folder)) if (to !== from && !edges.includes(to)) edges.push(to)
    graph.set(from, edges)
  }
  return graph
}

/** One cycle per strongly tied group, found by depth-first search, as `a -> b -> a` paths relative to lib/. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string): void => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open')
        found.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(LIB, f)).join(' -> '))
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node)
  return found
}

describe('lib/ import layering', () => {
  const graph = importGraph()

  it('finds the sources it checks, and every relative import names a file that exists', () => {
    assert.ok(graph.size > 50, `only ${graph.size} files under lib/`)
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => !existsSync(t)).map((t) => `${relative(LIB, file)} -> ${relative(LIB, t)}`)
    )
    assert.deepEqual(missing, [])
  })

  it('has no import cycle between files', () => {
    assert.deepEqual(cycles(graph), [])
  })

  it('has no import cycle between folders (metrics -> consumer -> producer -> metrics was one): each folder is a layer', () => {
    const folders = folderGraph(graph)
    assert.ok(
      folders.has(join(LIB, 'producer')) && folders.has(join(LIB, 'metrics')),
      "the folder graph names lib/'s folders"
    )
    assert.deepEqual(cycles(folders), [])
  })

  it("keeps compare and report one way: report reads compare's data, compare never imports report", () => {
    const compare = join(LIB, 'compare')
    const report = join(LIB, 'report')
    const upward = [...graph].flatMap(([file, targets]) =>
      file.startsWith(`${compare}/`)
        ? targets.filter((t) => t.startsWith(`${report}/`)).map((t) => `${relative(LIB, file)} -> ${relative(LIB, t)}`)
        : []
    )
    assert.deepEqual(upward, [])
  })
})
