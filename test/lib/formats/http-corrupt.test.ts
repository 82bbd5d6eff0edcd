import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { formatFor, readHttpRequest } from '../../../lib/formats/index.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { Rng } from '../../../lib/generators/random.js'

/** Decoding must either succeed or throw SqueezeError(DECODE_RECORD); anything else fails the test. */
function decodeOrCorrupt(value: Uint8Array, what: string): 'ok' | 'corrupt' {
  try {
    formatFor('http').decode(value)
    return 'ok'
  } catch (err) {
    if (err instanceof SqueezeError && err.code === ErrorCodes.DECODE_RECORD) return 'corrupt'
    assert.fail(`${what}: escaped as ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`)
  }
}

function validRecords(n: number): Buffer[] {
  const gen = createGenerator('http', { seed: 3 })
  return Array.from({ length: n }, () => gen.next().value)
}

describe("corrupt Cap'n Proto HttpRequest values", () => {
  const rng = new Rng(20240304)

  it('empty and tiny buffers', () => {
    for (let n = 0; n < 16; n++) assert.equal(decodeOrCorrupt(Buffer.alloc(n, 0xff), `0xff x ${n}`), 'corrupt')
    assert.equal(decodeOrCorrupt(new Uint8Array(0), 'empty'), 'corrupt')
  })

  it('random bytes', () => {
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(Array.from({ length: rng.int(600) }, () => rng.int(256)))
      decodeOrCorrupt(bytes, `random #${i}`)
    }
  })

  it('absurd segment tables fail fast without allocating', () => {
    const huge = Buffer.alloc(16)
    huge.writeUInt32LE(0xffffffff, 0) // 2^32 segments
    assert.equal(decodeOrCorrupt(huge, 'segment count'), 'corrupt')
    const big = Buffer.alloc(16)
    big.writeUInt32LE(0, 0)
    big.writeUInt32LE(0xffffffff, 4) // 32 GiB segment
    assert.equal(decodeOrCorrupt(big, 'segment size'), 'corrupt')
    const two = Buffer.alloc(24)
    two.writeUInt32LE(1, 0) // 2 segments, second one missing
    two.writeUInt32LE(1, 4)
    two.writeUInt32LE(5, 8)
    assert.equal(decodeOrCorrupt(two, 'missing segment'), 'corrupt')
  })

  it('every truncation of a valid message', () => {
    const [value] = validRecords(1) as [Buffer]
    for (let len = 0; len < value.length; len++) {
      // Truncation at the end can still leave a consistent frame only if nothing references the cut bytes.
      decodeOrCorrupt(value.subarray(0, len), `truncated to ${len}`)
    }
    assert.equal(decodeOrCorrupt(value.subarray(0, value.length - 8), 'last word cut'), 'corrupt')
  })

  it('every single-bit flip in the framing and pointer words', () => {
    const [value] = validRecords(1) as [Buffer]
    const seg = 8
    const ptrStart = seg + 8 + 48
    const words = [0, seg, ...Array.from({ length: 14 }, (_, i) => ptrStart + i * 8)]
    for (const at of words) {
      for (let bit = 0; bit < 64; bit++) {
        const copy = Buffer.from(value)
        const byte = at + (bit >> 3)
        copy[byte] = (copy[byte] as number) ^ (1 << (bit & 7))
        decodeOrCorrupt(copy, `bit ${bit} of word @${at}`)
      }
    }
  })

  it('2000 seeded random mutations of valid messages', () => {
    const records = validRecords(50)
    let corrupt = 0
    for (let i = 0; i < 2000; i++) {
      const copy = Buffer.from(rng.pick(records))
      const edits = rng.range(1, 8)
      for (let e = 0; e < edits; e++) {
        const kind = rng.int(4)
        const at = rng.int(copy.length)
        if (kind === 0) copy[at] = rng.int(256)
        else if (kind === 1) copy[at] = (copy[at] as number) ^ (1 << rng.int(8))
        else if (kind === 2) copy.writeUInt32LE(rng.u32(), Math.min(at, copy.length - 4))
        else copy.fill(0xff, at, Math.min(copy.length, at + rng.range(1, 16)))
      }
      const cut = rng.chance(0.2) ? copy.subarray(0, rng.int(copy.length)) : copy
      if (decodeOrCorrupt(cut, `mutation #${i}`) === 'corrupt') corrupt++
    }
    // Sanity: the mutations must actually exercise the error paths.
    assert.ok(corrupt > 200, `only ${corrupt} mutations were detected as corrupt`)
  })

  it('two-segment messages with random far pointers (capnp-ts fallback path)', () => {
    const [value] = validRecords(1) as [Buffer]
    for (let i = 0; i < 2000; i++) {
      const seg0 = Buffer.from(value.subarray(8))
      const words1 = rng.range(1, 8)
      const seg1 = Buffer.from(Array.from({ length: words1 * 8 }, () => rng.int(256)))
      for (let k = 0; k < 3; k++) {
        // Far pointer (kind 2, optional double-far bit) into segment 0 or 1, or a bogus segment id.
        const at = rng.int(seg0.length / 8) * 8
        seg0.writeUInt32LE(((rng.int(words1) << 3) | 2 | (rng.chance(0.3) ? 4 : 0)) >>> 0, at)
        seg0.writeUInt32LE(rng.chance(0.8) ? 1 : rng.int(4), at + 4)
      }
      const head = Buffer.alloc(16)
      head.writeUInt32LE(1, 0)
      head.writeUInt32LE(seg0.length / 8, 4)
      head.writeUInt32LE(words1, 8)
      decodeOrCorrupt(Buffer.concat([head, seg0, seg1]), `two-segment #${i}`)
    }
  })

  it('non-Buffer Uint8Array views at an offset decode like Buffers', () => {
    const [value] = validRecords(1) as [Buffer]
    const backing = new Uint8Array(value.length + 13)
    backing.set(value, 13)
    assert.deepEqual(readHttpRequest(backing.subarray(13)), readHttpRequest(value))
  })
})
