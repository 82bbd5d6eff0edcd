import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { packCapnp, unpackCapnp } from '../../../lib/formats/capnp-packing.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { SqueezeError } from '../../../lib/errors.js'

/** The capnp tool's packed encoding of one binary message (Debian package capnproto). */
function capnpPacked(message: Buffer): Buffer {
  const result = spawnSync('capnp', ['convert', 'binary:packed'], { input: message })
  if (result.error !== undefined)
    throw new Error(`capnp did not start (apt-get install capnproto): ${result.error.message}`)
  assert.equal(result.status, 0, result.stderr.toString())
  return result.stdout
}

/**
 * A valid one-segment message whose root struct's data section is 300 zero words then 300 words without a zero
 * byte: runs longer than one count byte holds.
 */
function longRuns(): Buffer {
  const dataWords = 600
  const header = Buffer.alloc(16)
  header.writeUInt32LE(0, 0) // segments - 1
  header.writeUInt32LE(1 + dataWords, 4) // segment 0's words
  header.writeUInt32LE(0, 8) // struct pointer, offset 0
  header.writeUInt16LE(dataWords, 12)
  header.writeUInt16LE(0, 14) // no pointers
  return Buffer.concat([header, Buffer.alloc(8 * 300), Buffer.alloc(8 * 300, 0x5a)])
}

describe("Cap'n Proto packing", () => {
  it('packs generated HttpRequest records to the bytes the capnp tool writes, and unpacks them back', () => {
    const generator = createGenerator('http', { seed: 35 })
    const messages = Array.from({ length: 50 }, () => generator.next().value)
    messages.push(longRuns())
    for (const [i, message] of messages.entries()) {
      const packed = packCapnp(message)
      assert.deepEqual(packed, capnpPacked(message), `message ${i}: the capnp tool's packed bytes`)
      assert.deepEqual(unpackCapnp(packed), message, `message ${i}: unpacks to the message`)
    }
  })

  it('input that is not whole words, or packed input cut short, is a decode error', () => {
    assert.throws(() => packCapnp(Buffer.alloc(7)), SqueezeError)
    const packed = packCapnp(Buffer.alloc(16, 0x7f))
    assert.throws(() => unpackCapnp(packed.subarray(0, packed.length - 3)), SqueezeError)
  })
})
