import type { SourceRecord } from '../../../../lib/compare/projection/rebatch.js'

/** `n` records of `size` value bytes, `gapMs` apart. */
export function records(n: number, size: number, gapMs: number): SourceRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: null,
    value: Buffer.alloc(size, i % 251),
    headers: [],
    timestamp: 1_000_000 + i * gapMs
  }))
}
