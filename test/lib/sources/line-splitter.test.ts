import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LineSplitter, utf8Boundary } from '../../../lib/sources/line-splitter.js'

function texts(lines: readonly Buffer[]): string[] {
  return lines.map((l) => l.toString('utf8'))
}

describe('LineSplitter', () => {
  it('joins a line across pushes and drops the newline and a CR before it', () => {
    const splitter = new LineSplitter(64)
    assert.deepEqual(texts(splitter.push(Buffer.from('one\r\ntw'))), ['one'])
    assert.deepEqual(texts(splitter.push(Buffer.from('o\nthree'))), ['two'])
    assert.equal(splitter.end()?.toString(), 'three')
    assert.equal(splitter.end(), null)
  })

  it('splits a line longer than the bound into pieces of at most that many bytes, counted once per line', () => {
    let splits = 0
    const splitter = new LineSplitter(8, () => splits++)
    const lines = [
      ...splitter.push(Buffer.from('abcdefghij')),
      ...splitter.push(Buffer.from('klmnopq\nshort\nABCDEFGHIJ\n'))
    ]
    assert.deepEqual(texts(lines), ['abcdefgh', 'ijklmnop', 'q', 'short', 'ABCDEFGH', 'IJ'])
    assert.equal(splits, 2)
    assert.ok(splitter.pendingBytes <= 8)
  })

  it('never holds more than the bound, however long the line', () => {
    const splitter = new LineSplitter(1000)
    let bytes = 0
    for (let i = 0; i < 500; i++) {
      for (const piece of splitter.push(Buffer.alloc(777, 0x61))) {
        assert.ok(piece.length <= 1000)
        bytes += piece.length
      }
      assert.ok(splitter.pendingBytes <= 1000)
    }
    bytes += splitter.end()?.length ?? 0
    assert.equal(bytes, 500 * 777, 'every byte is in a piece')
  })

  it('cuts before a UTF-8 sequence, never inside one', () => {
    const splitter = new LineSplitter(8)
    // 'aaaaaa' then 'é' (2 bytes) then '€' (3 bytes): the bound falls inside the euro sign.
    const pieces = splitter.push(Buffer.from('aaaaaaé€b\n'))
    assert.deepEqual(texts(pieces), ['aaaaaaé', '€b'])
    assert.equal(utf8Boundary(Buffer.from('ab€').subarray(0, 4)), 2)
    assert.equal(utf8Boundary(Buffer.from('ab€')), 5)
  })
})
