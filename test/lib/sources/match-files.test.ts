import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { glob } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { matchPaths } from '../../../lib/sources/match-files.js'

async function all(paths: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const p of paths) out.push(p)
  return out.sort()
}

describe('matchPaths', () => {
  it('lists what fs.glob lists, for plain paths, last-segment wildcards and the patterns it hands to fs.glob', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'squeeze-match-'))
    t.after(() => rmSync(root, { recursive: true, force: true }))
    const dir = join(root, 'logs')
    mkdirSync(join(dir, 'dir.log'), { recursive: true })
    mkdirSync(join(dir, 'sub'))
    for (const name of ['a.log', '.hidden.log', 'b.txt', 'we ird.log', 'X.LOG', 'a.log.1', 'sub/c.log', 'a+b(1).log'])
      writeFileSync(join(dir, name), 'x\n')
    symlinkSync(join(dir, 'a.log'), join(dir, 'link.log'))
    const relativeDir = relative(process.cwd(), dir)
    const patterns = [
      `${dir}/*.log`,
      `${dir}/*`,
      `${dir}/?.log`,
      `${dir}/.*.log`,
      `${dir}/a.log*`,
      `${dir}/a+b(1).log`,
      `${dir}/a.log`,
      `${dir}/missing.log`,
      `${dir}//*.log`,
      `${dir}/../logs/*.log`,
      `${relativeDir}/*.log`,
      `./${relativeDir}/a.log`,
      `${dir}/*/*.log`,
      `${dir}/**/*.log`,
      `${dir}/{a,b}.*`,
      `${dir}/[ab].log`,
      `${root}/missing/*.log`
    ]
    for (const pattern of patterns)
      assert.deepEqual(await all(matchPaths(pattern)), await all(glob(pattern)), `the paths ${pattern} matches`)
  })
})
