import { ErrorCodes, SqueezeError } from '../errors.js'

/**
 * Cap'n Proto's packed encoding (capnproto.org/encoding.html#packing): each 8-byte word becomes a tag byte
 * naming its non-zero bytes, then those bytes; a zero word is followed by a count of further zero words, an
 * all-non-zero word by a count of further words copied as they are (each with at most one zero byte, as the
 * reference encoder decides).
 */
export function packCapnp(message: Uint8Array): Buffer {
  if (message.length % 8 !== 0) throw new SqueezeError(ErrorCodes.DECODE_RECORD, `a Cap'n Proto message is whole words; got ${message.length} bytes`)
  // Worst case: a tag per word plus a count byte per 255 raw words.
  const out = Buffer.allocUnsafe(message.length + message.length / 8 + 2)
  let at = 0
  let i = 0
  while (i < message.length) {
    const tagAt = at++
    let tag = 0
    for (let b = 0; b < 8; b++) {
      const byte = message[i + b] as number
      if (byte !== 0) {
        tag |= 1 << b
        out[at++] = byte
      }
    }
    out[tagAt] = tag
    i += 8
    if (tag === 0) {
      let zeros = 0
      while (zeros < 255 && i < message.length && isZeroWord(message, i)) {
        zeros++
        i += 8
      }
      out[at++] = zeros
    } else if (tag === 0xff) {
      const start = i
      while (i - start < 255 * 8 && i < message.length && zeroBytes(message, i) < 2) i += 8
      out[at++] = (i - start) / 8
      out.set(message.subarray(start, i), at)
      at += i - start
    }
  }
  return out.subarray(0, at)
}

/** The message packCapnp packed. Throws SqueezeError(DECODE_RECORD) on input that is not packed Cap'n Proto. */
export function unpackCapnp(packed: Uint8Array): Buffer {
  const words: Buffer[] = []
  let size = 0
  let i = 0
  const bad = (): SqueezeError => new SqueezeError(ErrorCodes.DECODE_RECORD, 'packed Cap\'n Proto ends inside a word')
  while (i < packed.length) {
    const tag = packed[i++] as number
    const word = Buffer.alloc(8)
    for (let b = 0; b < 8; b++) {
      if ((tag & (1 << b)) === 0) continue
      if (i >= packed.length) throw bad()
      word[b] = packed[i++] as number
    }
    words.push(word)
    size += 8
    if (tag === 0 || tag === 0xff) {
      if (i >= packed.length) throw bad()
      const count = packed[i++] as number
      if (tag === 0) {
        words.push(Buffer.alloc(count * 8))
      } else {
        if (i + count * 8 > packed.length) throw bad()
        words.push(Buffer.from(packed.subarray(i, i + count * 8)))
        i += count * 8
      }
      size += count * 8
    }
  }
  return Buffer.concat(words, size)
}

function isZeroWord(message: Uint8Array, at: number): boolean {
  for (let b = 0; b < 8; b++) if (message[at + b] !== 0) return false
  return true
}

function zeroBytes(message: Uint8Array, at: number): number {
  let zeros = 0
  for (let b = 0; b < 8; b++) if (message[at + b] === 0) zeros++
  return zeros
}
