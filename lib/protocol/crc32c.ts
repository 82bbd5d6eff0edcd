import { createRequire } from 'node:module'

// CRC-32C (Castagnoli), the checksum of Kafka record batches (magic 2). @node-rs/crc32 uses the CPU's CRC32
// instruction, several times faster than the slicing-by-8 tables below once V8 has optimised them, and far more
// before that, which is most of a short run. The tables stay
// as the fallback where no prebuilt binding exists for the platform.
// Both load on first use: a compression thread, which seals batches but never checksums one, loads neither (the
// binding is a visible part of its boot), and the event loop builds no tables it does not use.
const POLY = 0x82f63b78

function buildTables(): Tables {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256))
  const first = tables[0] as Uint32Array
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
    first[n] = c >>> 0
  }
  for (let n = 0; n < 256; n++) {
    let c = first[n] as number
    for (let t = 1; t < 8; t++) {
      c = (first[c & 0xff] as number) ^ (c >>> 8)
      ;(tables[t] as Uint32Array)[n] = c >>> 0
    }
  }
  return tables as Tables
}

type Tables = [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array]
let tables: Tables | undefined

type NativeCrc32c = (input: Uint8Array, initial?: number) => number

function loadNative(): NativeCrc32c | null {
  try {
    const binding = createRequire(import.meta.url)('@node-rs/crc32') as { crc32c?: NativeCrc32c }
    return typeof binding.crc32c === 'function' ? binding.crc32c : null
  } catch {
    return null
  }
}

/** The native binding, null for the JS tables; undefined until the first checksum. */
let native: NativeCrc32c | null | undefined

/** The binding crc32c uses (null: the tables), chosen on the first call. */
function nativeBinding(): NativeCrc32c | null {
  // Not ??=: null (no binding) is a choice made, not one to make again on every call.
  if (native === undefined) native = process.env['SQUEEZE_CRC32C'] === 'js' ? null : loadNative()
  return native
}

/** Which implementation crc32c uses: the native binding, or the JS tables. */
export function crc32cImplementation(): 'native' | 'js' {
  return nativeBinding() === null ? 'js' : 'native'
}

export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  const binding = nativeBinding()
  if (binding !== null) return binding(start === 0 && end === data.length ? data : data.subarray(start, end))
  return crc32cTables(data, start, end)
}

/** The portable implementation (exported so tests hold both to the same answers). */
export function crc32cTables(data: Uint8Array, start = 0, end = data.length): number {
  const [T0, T1, T2, T3, T4, T5, T6, T7] = (tables ??= buildTables())
  let crc = 0xffffffff
  let i = start
  const fastEnd = end - 8
  while (i <= fastEnd) {
    const a = crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))
    crc =
      T7[a & 0xff]! ^
      T6[(a >>> 8) & 0xff]! ^
      T5[(a >>> 16) & 0xff]! ^
      T4[a >>> 24]! ^
      T3[data[i + 4]!]! ^
      T2[data[i + 5]!]! ^
      T1[data[i + 6]!]! ^
      T0[data[i + 7]!]!
    i += 8
  }
  while (i < end) crc = T0[(crc ^ data[i++]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}
