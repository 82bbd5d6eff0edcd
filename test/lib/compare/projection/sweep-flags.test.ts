import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  parseBatchSizeList,
  parseSampleBudget,
  parseSampleFlags
} from '../../../../lib/compare/projection/sweep-flags.js'
import { SqueezeError } from '../../../../lib/errors.js'

describe('--sample', () => {
  it('a bare number counts records; a size (the --batch-size units) counts record bytes', () => {
    assert.deepEqual(parseSampleBudget('200000'), { records: 200_000 })
    assert.deepEqual(parseSampleBudget('64MiB'), { bytes: 64 * 1024 * 1024 })
    assert.deepEqual(parseSampleBudget('1GiB'), { bytes: 1024 ** 3 })
    assert.deepEqual(parseSampleBudget('512KB'), { bytes: 512_000 })
    assert.deepEqual(parseSampleBudget('100b'), { bytes: 100 })
    assert.deepEqual(parseSampleFlags({ sample: '8MiB', 'sample-windows': '4' }), {
      bytes: 8 * 1024 * 1024,
      windows: 4
    })
    assert.equal(parseSampleFlags({}), undefined)
    // The size parser is the one --batch-size uses.
    assert.deepEqual(parseBatchSizeList('16KiB,1MiB'), [16 * 1024, 1024 * 1024])
  })

  it('refuses what is neither, in one line naming the flag', () => {
    for (const bad of ['0', '1.5', '-3', '64XB', 'many', '', '0MiB']) {
      assert.throws(
        () => parseSampleBudget(bad),
        (err: unknown) =>
          err instanceof SqueezeError &&
          /^--sample takes a record count such as 200000 or a size such as 64MiB; got "/.test(err.message),
        bad
      )
    }
    assert.throws(() => parseSampleFlags({ 'sample-windows': '4' }), /--sample-windows needs --sample/)
  })
})
