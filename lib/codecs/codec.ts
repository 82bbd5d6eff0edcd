import { ErrorCodes, SqueezeError } from '../errors.js'

/** The five codecs a Kafka record batch can carry, with the id stored in the batch attributes' low 3 bits. */
export const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const
export type CodecName = (typeof CODEC_NAMES)[number]

export const CODEC_IDS: Readonly<Record<CodecName, number>> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 }

export function codecNameForId(id: number): CodecName | undefined {
  return CODEC_NAMES[id]
}

/** A codec bound to one level. Instances are independent, so two producers can run zstd 1 and zstd 19 side by side. */
export interface Codec {
  readonly name: CodecName
  readonly id: number
  /** The level this instance compresses at; null for codecs without levels (none, snappy). */
  readonly level: number | null
  compress(input: Uint8Array): Buffer
  /**
   * compress() into memory this thread reuses: the view returned is valid only until the next compression on this
   * thread, for a caller that copies it at once (sealing a batch). A fresh output per batch (allocation,
   * external-memory GC) costs a fast codec a large share of its speed (docs/design.md, "Design notes").
   */
  compressTransient?(input: Uint8Array): Uint8Array
  /**
   * The decompressed bytes, refused with CODEC_OUTPUT_LIMIT (before allocating, where the format states its size)
   * once they would exceed `maxOutputBytes` (DEFAULT_MAX_DECOMPRESSED_BYTES when left out): one hostile batch must
   * not take a reader's memory.
   */
  decompress(input: Uint8Array, maxOutputBytes?: number): Buffer
  /**
   * Decompresses into `output` (from its start) and returns the byte count, or -1 when the result would not
   * fit or its size is not known up front (then call decompress). Lets a reader reuse one buffer: a fresh
   * 1 MiB buffer per batch costs more in page faults than LZ4 takes to fill it.
   */
  decompressInto?(input: Uint8Array, output: Buffer): number
}

/**
 * The compressed bytes in a buffer of their own, for a caller that keeps them: compressed into this thread's reused
 * memory and copied out at their size where the codec can (compressTransient), rather than into compress()'s fresh
 * worst-case-sized output, which the kept view would hold whole.
 */
export function compressToOwnBuffer(codec: Codec, input: Uint8Array): Buffer {
  return codec.compressTransient === undefined ? codec.compress(input) : Buffer.from(codec.compressTransient(input))
}

/**
 * The decompression cap when a caller names none: the readers' own default (lib/consumer/decompression-limit.ts)
 * at their usual 8 MiB partition fetch.
 */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024

/** The error every codec raises for output past its cap; `bytes` is what the input declares or what came out so far. */
export function outputLimitError(codec: CodecName, bytes: number, limit: number): SqueezeError {
  const what = bytes > limit ? `declares ${bytes} bytes` : 'grows'
  const message = `${codec} output ${what} past the ${limit}-byte decompression cap`
  return new SqueezeError(ErrorCodes.CODEC_OUTPUT_LIMIT, message)
}

/** Room past a decompressed section's exact size that `into` needs: LZ4 bounds its output by whole blocks (up to 4 MiB). */
export const DECOMPRESS_HEADROOM = 4 * 1024 * 1024

/**
 * Decompresses `input` into the start of `into` (reused memory, sized for the output plus DECOMPRESS_HEADROOM):
 * in place where the codec can (decompressInto), else into a fresh buffer copied in (gzip has no such call).
 */
export function decompressIntoBuffer(codec: Codec, input: Uint8Array, into: Buffer): void {
  if ((codec.decompressInto?.(input, into) ?? -1) < 0) codec.decompress(input).copy(into)
}

/** What levels a codec accepts, and which one Kafka uses by default. */
export interface LevelRange {
  readonly min: number
  readonly max: number
  readonly default: number
  /** Kafka's config name for the level, e.g. compression.zstd.level. */
  readonly configName: string
}
