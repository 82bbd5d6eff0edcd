// Kafka's record fields use zigzag varints (protobuf style). Values fit a JS number: offsets deltas and
// lengths are 32-bit, timestamp deltas are 64-bit in the format but far below 2^53 in practice.

export function zigzagSize(value: number): number {
  let z = value >= 0 ? value * 2 : -value * 2 - 1
  let size = 1
  while (z >= 0x80) {
    z = Math.floor(z / 128)
    size++
  }
  return size
}

/** Writes a zigzag varint at `offset`, returns the offset after it. */
export function writeZigzag(buf: Uint8Array, offset: number, value: number): number {
  if (value >= -0x40000000 && value < 0x40000000) {
    let z = (value << 1) ^ (value >> 31)
    while ((z & ~0x7f) !== 0) {
      buf[offset++] = (z & 0x7f) | 0x80
      z >>>= 7
    }
    buf[offset++] = z
    return offset
  }
  let z = value >= 0 ? value * 2 : -value * 2 - 1
  while (z >= 0x80) {
    buf[offset++] = (z % 128) | 0x80
    z = Math.floor(z / 128)
  }
  buf[offset++] = z
  return offset
}

/** A decoded varint and the offset just past it; `readZigzag` reuses one cursor object to avoid allocation. */
export interface Cursor {
  offset: number
}

export function readZigzag(buf: Uint8Array, cursor: Cursor): number {
  let offset = cursor.offset
  let result = 0
  let multiplier = 1
  for (let i = 0; i < 10; i++) {
    if (offset >= buf.length) throw new RangeError('varint runs past the end of the buffer')
    const byte = buf[offset++] as number
    result += (byte & 0x7f) * multiplier
    if ((byte & 0x80) === 0) {
      cursor.offset = offset
      return result % 2 === 0 ? result / 2 : -(result + 1) / 2
    }
    multiplier *= 128
  }
  throw new RangeError('varint longer than 10 bytes')
}
