import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_WIDTH, streamWidth } from '../../../lib/terminal/width.js'

describe('streamWidth', () => {
  it("a terminal's own width; else COLUMNS when it is a positive whole number; else the default", () => {
    assert.equal(streamWidth({ isTTY: true, columns: 87 }, { COLUMNS: '200' }), 87)
    assert.equal(streamWidth({ isTTY: false }, { COLUMNS: '80' }), 80)
    assert.equal(streamWidth({}, {}), DEFAULT_WIDTH)
    for (const bad of ['', '0', '-80', '80x', ' 80', '1e2', '99999'])
      assert.equal(streamWidth({}, { COLUMNS: bad }), DEFAULT_WIDTH, bad)
  })
})
