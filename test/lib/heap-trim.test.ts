import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { trimHeap } from '../../lib/heap-trim.js'

describe('trimHeap', () => {
  it('is the native binding’s call, answering whether memory went back (a stale build would trim nothing)', () => {
    const binding = createRequire(import.meta.url)('squeeze-lz4') as { trimHeap?: unknown }
    assert.equal(typeof binding.trimHeap, 'function')
    assert.equal(typeof trimHeap(), 'boolean')
  })
})
