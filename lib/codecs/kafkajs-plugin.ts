import type { Codec } from './codec.js'
import { decoderForId } from './index.js'

/** kafkajs's codec plugin shape: `CompressionCodecs[type] = () => ({ compress(encoder), decompress(buffer) })`. */
export interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>
  decompress(buffer: Buffer): Promise<Buffer>
}

export function toKafkajsCodec(codec: Codec): () => KafkajsCodec {
  const plugin: KafkajsCodec = {
    compress: async (encoder) => codec.compress(encoder.buffer),
    decompress: async (buffer) => codec.decompress(buffer)
  }
  return () => plugin
}

/**
 * Installs squeeze's decoders for snappy, lz4 and zstd into a kafkajs CompressionCodecs registry, so a plain
 * kafkajs consumer (the copier's group consumer) reads every codec. Only decompression goes through the
 * global registry: it does not depend on the level, so the registry being process-wide is harmless here.
 */
export function registerKafkajsDecoders(registry: Record<number, () => KafkajsCodec>): void {
  for (const id of [2, 3, 4]) {
    const codec = decoderForId(id)
    if (codec !== undefined) registry[id] = toKafkajsCodec(codec)
  }
}
