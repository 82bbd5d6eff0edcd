import assert from 'node:assert/strict'
import { SqueezeError } from '../../lib/errors.js'

/** The message of the CONFIG_INVALID error `fn` throws; fails the test when it throws nothing or something else. */
export function configError(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof SqueezeError)
    assert.equal(err.code, 'SQUEEZE_ERR_CONFIG_INVALID')
    return err.message
  }
  assert.fail('expected a CONFIG_INVALID error')
}
