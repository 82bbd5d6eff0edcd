import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inputsFor } from '../../../bench/lib/inputs.js'

describe('bench inputs', () => {
  it('are written only for the sections that read them', () => {
    assert.deepEqual(inputsFor(new Set(['parse'])), [])
    assert.deepEqual(inputsFor(new Set(['e2e', 'parse', 'decode', 'keeping-up'])), [])
    assert.deepEqual(inputsFor(new Set(['consumer'])), ['http'])
    assert.deepEqual(inputsFor(new Set(['copier', 'e2e'])), ['http'])
    assert.deepEqual(inputsFor(new Set(['lz4'])), ['corpus', 'http'])
    assert.deepEqual(
      inputsFor(
        new Set(['ceiling', 'producer', 'levels', 'lz4', 'keeping-up', 'consumer', 'copier', 'decode', 'parse', 'e2e'])
      ),
      ['corpus', 'http']
    )
  })
})
