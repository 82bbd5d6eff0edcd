import { z } from 'zod'
import { validateConfig } from './validate.js'

/** The -X name of the decompression cap, named like Kafka's settings (there is no Java equivalent). */
export const MAX_BATCH_UNCOMPRESSED_BYTES = 'squeeze.max.batch.uncompressed.bytes'

/**
 * How far past the stored bytes a batch may decompress by default. Log batches land well below it at every codec
 * and level (docs/reliability.md, "Bounded decompression"); a decompression bomb lands thousands of times above.
 */
export const DECOMPRESSION_RATIO_LIMIT = 16

/** The compressed batch size the default assumes at least: Kafka's default max.message.bytes, about 1 MiB. */
const MIN_BATCH_BYTES = 1024 * 1024

/**
 * The cap a reader uses unless told otherwise: the ratio limit times its per-partition fetch size (the most one
 * partition's answer holds, bar a first batch larger than it), and at least times Kafka's default largest batch.
 */
export function defaultMaxBatchUncompressedBytes(partitionFetchBytes: number): number {
  return DECOMPRESSION_RATIO_LIMIT * Math.max(partitionFetchBytes, MIN_BATCH_BYTES)
}

const readSchema = z
  .object({
    [MAX_BATCH_UNCOMPRESSED_BYTES]: z.coerce
      .number({ invalid_type_error: 'must be a number' })
      .int('must be a whole number')
      .min(64 * 1024, 'must be at least 65536 (64 KiB)')
      .max(2 ** 31 - 1, 'must be below 2 GiB')
  })
  .partial()
  .strict()

/** The read settings squeeze adds to a reader's -X list, validated; undefined fields take the reader's defaults. */
export interface ReadSettings {
  readonly maxBatchUncompressedBytes?: number
}

/** Takes squeeze's read settings out of -X settings: the validated read settings, and the rest for their own parser. */
export function splitReadSettings(properties: Record<string, string>): {
  read: ReadSettings
  rest: Record<string, string>
} {
  const own: Record<string, string> = {}
  const rest: Record<string, string> = {}
  for (const [name, value] of Object.entries(properties)) {
    if (name === MAX_BATCH_UNCOMPRESSED_BYTES) own[name] = value
    else rest[name] = value
  }
  const parsed = validateConfig(readSchema, own, 'read settings')
  const max = parsed[MAX_BATCH_UNCOMPRESSED_BYTES]
  return { read: max === undefined ? {} : { maxBatchUncompressedBytes: max }, rest }
}
