import { ErrorCodes, SqueezeError } from '../errors.js'

/**
 * Cap'n Proto's packed encoding (capnproto.org/encoding.html#packing): each 8-byte word becomes a tag byte
 * naming its non-zero bytes, then those bytes; a zero word is followed by a count of further zero words, an
 * all-non-zero word by a count of further words copied as they are (each with at most one zero byte, as the
 * reference encoder decides).
 */
export function packCapnp(message: Uint8Array): Buffer {
  if (message.length % 8 !== 0) {
    throw new SqueezeError(
      ErrorCodes.DECODE_RECORD,
      `a Cap'n Proto message is whole words; got ${message.length} bytes`
    )
  }
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
  const out = Buffer.alloc(unpackedSize(packed))
  let at = 0
  let i = 0
  while (i < packed.length) {
    const tag = packed[i++] as number
    for (let b = 0; b < 8; b++) if ((tag & (1 << b)) !== 0) out[at + b] = packed[i++] as number
    at += 8
    if (tag === 0) {
      at += 8 * (packed[i++] as number)
    } else if (tag === 0xff) {
      const bytes = 8 * (packed[i++] as number)
      out.set(packed.subarray(i, i + bytes), at)
      at += bytes
      i += bytes
    }
  }
  return out
}

/** The unpacked size, walking the tags once: a first pass, so unpacking writes into one buffer of that size. */
function unpackedSize(packed: Uint8Array): number {
  let size = 0
  let i = 0
  while (i < packed.length) {
    const tag = packed[i++] as number
    for (let b = 0; b < 8; b++) if ((tag & (1 << b)) !== 0) i++
    size += 8
    if (tag === 0 || tag === 0xff) {
      if (i >= packed.length) throw cutShort()
      const count = packed[i++] as number
      size += 8 * count
      if (tag === 0xff) i += 8 * count
    }
    if (i > packed.length) throw cutShort()
  }
  return size
}

function cutShort(): SqueezeError {
  return new SqueezeError(ErrorCodes.DECODE_RECORD, "packed Cap'n Proto ends inside a word")
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
