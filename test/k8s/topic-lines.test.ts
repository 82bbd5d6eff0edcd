import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { matchRecord } from './topic-lines.js'

describe('topic-lines', () => {
  it('a record whose value holds the text comes back with its headers as text', () => {
    const record = {
      value: Buffer.from('marker 1'),
      headers: [
        { key: 'squeeze.k8s.pod', value: Buffer.from('p') },
        { key: 'empty', value: null }
      ]
    }
    assert.deepEqual(matchRecord(record, 'marker'), {
      value: 'marker 1',
      headers: { 'squeeze.k8s.pod': 'p', empty: '' }
    })
  })

  it('a record without the text, or without a value, is left out', () => {
    assert.equal(matchRecord({ value: Buffer.from('other'), headers: [] }, 'marker'), null)
    assert.equal(matchRecord({ value: null, headers: [] }, 'marker'), null)
  })
})
