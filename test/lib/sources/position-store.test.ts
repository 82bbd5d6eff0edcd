import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ErrorCodes, type SqueezeError } from '../../../lib/errors.js'
import type { FilePosition } from '../../../lib/sources/file-set.js'
import { PositionStore } from '../../../lib/sources/position-store.js'

function position(offset: number): FilePosition {
  return { path: '/var/log/app.log', dev: 1, ino: 2, fingerprint: 'ab', fingerprintBytes: 256, offset }
}

describe('PositionStore', () => {
  it('saves into a folder it makes, replaces the state file whole, and makes the folder again if it goes', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'squeeze-store-'))
    t.after(() => rmSync(root, { recursive: true, force: true }))
    const dir = join(root, 'state', 'nested')
    const store = new PositionStore(dir, 'host-abc')
    assert.deepEqual(await store.load(), [], 'no state file yet: no positions')
    await store.save([position(10)])
    await store.save([position(20)])
    assert.deepEqual(await store.load(), [position(20)])
    assert.equal(existsSync(`${store.path}.tmp`), false, 'the temporary file was renamed over the state file')
    rmSync(join(root, 'state'), { recursive: true })
    await store.save([position(30)])
    assert.deepEqual(await store.load(), [position(30)])
  })

  it('a state file that does not parse is a clear error', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-store-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const store = new PositionStore(dir, 'host-abc')
    writeFileSync(store.path, '{"version": 1, "files": [')
    await assert.rejects(store.load(), /does not parse.*move it away to start over/)
  })

  it('saveLoaded writes the positions loaded back as they were, and a directory it cannot write is one clear error', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-store-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const store = new PositionStore(join(dir, 'new'), 'host-abc')
    await store.saveLoaded(await store.load())
    assert.deepEqual(await store.load(), [], 'a state file with no positions, in the folder it made')
    await store.save([position(40)])
    await store.saveLoaded(await store.load())
    assert.deepEqual(await store.load(), [position(40)])
    // Where the temporary file goes is a directory (what root can still not write over): the save fails.
    const blocked = new PositionStore(dir, 'host-def')
    mkdirSync(`${blocked.path}.tmp`)
    await assert.rejects(
      blocked.saveLoaded([]),
      (err: SqueezeError) =>
        err.code === ErrorCodes.SOURCE &&
        /^cannot save read positions in .*: EISDIR.*; give --state-dir a directory squeeze can write, or --no-state/.test(
          err.message
        )
    )
  })
})
