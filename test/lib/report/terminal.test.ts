import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cutMiddle, fitTable } from '../../../lib/report/terminal.js'

describe('cutMiddle', () => {
  it('keeps the start and the longer end, with ~ between, in exactly the width', () => {
    assert.equal(cutMiddle('logs.http', 20), 'logs.http')
    assert.equal(cutMiddle('prod.http-access.zstd-3', 12), 'prod.~zstd-3')
    assert.equal(cutMiddle('abcdef', 2), '~f')
    assert.equal(cutMiddle('abcdef', 1), 'a')
    for (let w = 1; w < 30; w++) assert.equal(cutMiddle('x'.repeat(40), w).length, w)
  })
})

describe('fitTable', () => {
  const headers = ['topic', 'extra', 'kept', 'spare']
  const rows = [['a-topic-name-of-some-length.zstd-1', 'e'.repeat(12), 'k', 's'.repeat(10)]]

  it('drops dropOrder first, then beforeCutting while the first column would be cut under 20, then cuts it', () => {
    // Wide enough once 'extra' is gone: 'spare' stays.
    assert.match(fitTable(headers, rows, { width: 60, wide: false }, [1], [3]), /^topic +kept +spare$/m)
    // Cut to 22 (not under 20): 'spare' stays.
    const cut = fitTable(headers, rows, { width: 40, wide: false }, [1], [3])
    assert.match(cut, /^topic +kept +spare$/m)
    assert.match(cut, /^a-topic-na~ngth\.zstd-1 +k +s+$/m)
    // The name would be cut under 20: 'spare' goes first, and the name is cut to what is left.
    const dropped = fitTable(headers, rows, { width: 36, wide: false }, [1], [3])
    for (const line of dropped.split('\n')) assert.ok(line.length <= 36, line)
    assert.match(dropped, /^topic +kept$/m)
    assert.match(dropped, /^a-topic-name-o~e-length\.zstd-1 +k$/m)
    assert.equal(fitTable(headers, rows, { width: 10, wide: true }).split('\n')[0]?.includes('spare'), true)
  })
})
