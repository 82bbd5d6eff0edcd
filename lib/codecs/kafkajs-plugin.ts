import kafkajs from 'kafkajs'
import { compressToOwnBuffer, type Codec } from './codec.js'
import { decoderForId } from './index.js'

/** kafkajs's codec plugin shape: `CompressionCodecs[type] = () => ({ compress(encoder), decompress(buffer) })`. */
export interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>
  decompress(buffer: Buffer): Promise<Buffer>
}

export function toKafkajsCodec(codec: Codec): () => KafkajsCodec {
  const plugin: KafkajsCodec = {
    // Copied out before the await: another batch's compression may reuse this thread's memory before kafkajs reads it.
    compress: async (encoder) => compressToOwnBuffer(codec, encoder.buffer),
    decompress: async (buffer) => codec.decompress(buffer)
  }
  return () => plugin
}

/**
 * Installs squeeze's decoders for snappy, lz4 and zstd into a kafkajs CompressionCodecs registry, so a plain
 * kafkajs consumer (the copier's group consumer) reads every codec. Only decompression goes through the
 * registry: it does not depend on the level.
 */
export function registerKafkajsDecoders(registry: Record<number, () => KafkajsCodec>): void {
  for (const id of [2, 3, 4]) {
    const codec = decoderForId(id)
    if (codec !== undefined) registry[id] = toKafkajsCodec(codec)
  }
}

/**
 * Installs the decoders into kafkajs's process-wide registry. The registry is global, so only the process owner
 * (a service's main, a test or bench that runs a copier) calls this; importing a module never does.
 */
export function installKafkajsDecoders(): void {
  registerKafkajsDecoders(kafkajs.CompressionCodecs as unknown as Record<number, () => KafkajsCodec>)
}
