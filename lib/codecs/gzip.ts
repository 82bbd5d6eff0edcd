import { gunzipSync, gzipSync } from 'node:zlib'
import type { Codec } from './codec.js'

export function createGzipCodec(level: number): Codec {
  return {
    name: 'gzip',
    id: 1,
    level,
    compress: (input) => gzipSync(input, { level }),
    decompress: (input) => gunzipSync(input)
  }
}
