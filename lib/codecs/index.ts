import { createRequire } from 'node:module'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { CODEC_NAMES, DEFAULT_MAX_DECOMPRESSED_BYTES, outputLimitError } from './codec.js'
import type { Codec, CodecName, LevelRange } from './codec.js'

/**
 * Each codec's module (and its native library) loads when a codec of its kind is first created: a producer at
 * one codec need not load every codec's native library on each of its threads at start-up. Synchronous
 * (createCodec is), through require of the ES module.
 */
const load = createRequire(import.meta.url)
const gzip = (): typeof import('./gzip.js') => load('./gzip.js') as typeof import('./gzip.js')
const lz4 = (): typeof import('./lz4.js') => load('./lz4.js') as typeof import('./lz4.js')
const snappy = (): typeof import('./snappy.js') => load('./snappy.js') as typeof import('./snappy.js')
const zstd = (): typeof import('./zstd.js') => load('./zstd.js') as typeof import('./zstd.js')

export {
  CODEC_IDS,
  CODEC_NAMES,
  codecNameForId,
  compressToOwnBuffer,
  DECOMPRESS_HEADROOM,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  decompressIntoBuffer,
  type Codec,
  type CodecName,
  type LevelRange
} from './codec.js'

/**
 * Level ranges use Kafka's names, ranges and defaults (KIP-390), except lz4's meaning and default. squeeze's
 * lz4:1 is the fast compressor and lz4:2..17 LZ4HC at that level; Java's compression.lz4.level is LZ4HC at every
 * level but its default 9, which selects the fast compressor. squeeze names the compressor by its level
 * instead, so lz4:9 is LZ4HC 9; lz4 defaults to 1, the fast compressor that both librdkafka and the Java
 * producer write by default.
 */
export const LEVEL_RANGES: Readonly<Partial<Record<CodecName, LevelRange>>> = {
  gzip: { min: 1, max: 9, default: 6, configName: 'compression.gzip.level' },
  lz4: { min: 1, max: 17, default: 1, configName: 'compression.lz4.level' },
  zstd: { min: -131072, max: 22, default: 3, configName: 'compression.zstd.level' }
}

/**
 * A codec and level as the user names it: `zstd:3`, `gzip`, `none`, or `zstd:adaptive`, whose level the
 * producer picks per batch (level null until then; see lib/producer/adaptive-level.ts).
 */
export interface CodecSpec {
  readonly codec: CodecName
  readonly level: number | null
  readonly adaptive?: true
}

/** The levels an adaptive codec moves over by default: where the level changes the output (lz4's C library caps LZ4HC at 12). */
export const ADAPTIVE_RANGES: Readonly<Partial<Record<CodecName, { readonly min: number; readonly max: number }>>> = {
  gzip: { min: 1, max: 9 },
  lz4: { min: 1, max: 12 },
  zstd: { min: 1, max: 19 }
}

export function isAdaptive(spec: CodecSpec): boolean {
  return spec.adaptive === true
}

/** `codec:adaptive`, for a codec whose level changes anything. */
export function adaptiveCodecSpec(codec: string): CodecSpec {
  const { codec: name } = resolveCodecSpec(codec)
  if (ADAPTIVE_RANGES[name] === undefined) {
    throw new SqueezeError(
      ErrorCodes.CODEC_LEVEL,
      `codec ${name} has no levels to adapt: adaptive works for ${Object.keys(ADAPTIVE_RANGES).join(', ')}`
    )
  }
  return { codec: name, level: null, adaptive: true }
}

export function isCodecName(name: string): name is CodecName {
  return (CODEC_NAMES as readonly string[]).includes(name)
}

export function describeLevels(codec: CodecName): string {
  const range = LEVEL_RANGES[codec]
  if (range === undefined) return `${codec} takes no level`
  return `${range.configName} accepts ${range.min}..${range.max} (default ${range.default})`
}

/** Validates a codec name and level; `level` undefined or null means the codec's default. */
export function resolveCodecSpec(codec: string, level?: number | null): CodecSpec {
  if (!isCodecName(codec)) {
    throw new SqueezeError(ErrorCodes.CODEC_UNKNOWN, `unknown codec "${codec}": use one of ${CODEC_NAMES.join(', ')}`)
  }
  const range = LEVEL_RANGES[codec]
  if (range === undefined) {
    if (level !== undefined && level !== null) {
      throw new SqueezeError(ErrorCodes.CODEC_LEVEL, `codec ${codec} takes no level, got ${level}`)
    }
    return { codec, level: null }
  }
  const chosen = level ?? range.default
  const valid = Number.isInteger(chosen) && chosen >= range.min && chosen <= range.max
  if (!valid) {
    throw new SqueezeError(ErrorCodes.CODEC_LEVEL, `invalid ${codec} level ${chosen}: ${describeLevels(codec)}`)
  }
  return { codec, level: chosen }
}

/** Parses `codec[:level]`, e.g. `zstd:19`, `zstd:-5`, `lz4`, `none`. */
export function parseCodecSpec(text: string): CodecSpec {
  const trimmed = text.trim()
  const colon = trimmed.indexOf(':')
  if (colon === -1) return resolveCodecSpec(trimmed.toLowerCase())
  const name = trimmed.slice(0, colon).toLowerCase()
  const levelText = trimmed.slice(colon + 1)
  if (levelText.toLowerCase() === 'adaptive') return adaptiveCodecSpec(name)
  const level = /^-?\d+$/.test(levelText) ? Number(levelText) : Number.NaN
  if (Number.isNaN(level)) {
    if (!isCodecName(name)) resolveCodecSpec(name)
    throw new SqueezeError(
      ErrorCodes.CODEC_LEVEL,
      `invalid level "${levelText}" in "${text}": ${describeLevels(name as CodecName)}, or adaptive`
    )
  }
  return resolveCodecSpec(name, level)
}

export function formatCodecSpec(spec: CodecSpec): string {
  if (isAdaptive(spec)) return `${spec.codec}:adaptive`
  return spec.level === null ? spec.codec : `${spec.codec}:${spec.level}`
}

/** A codec at one level: an adaptive spec must first be given its batch's level (createCodec would guess). */
export function createCodec(spec: CodecSpec): Codec {
  if (isAdaptive(spec))
    throw new SqueezeError(
      ErrorCodes.CODEC_LEVEL,
      `${formatCodecSpec(spec)} needs a level per batch; ask its AdaptiveLevel`
    )
  const { codec, level } = resolveCodecSpec(spec.codec, spec.level)
  switch (codec) {
    case 'none':
      return { name: 'none', id: 0, level: null, compress: copyOf, decompress: copyWithin, decompressInto: copyInto }
    case 'gzip':
      return gzip().createGzipCodec(level as number)
    case 'snappy':
      return snappy().createSnappyCodec()
    case 'lz4':
      return lz4().createLz4Codec(level as number)
    case 'zstd':
      return zstd().createZstdCodec(level as number)
  }
}

function copyOf(input: Uint8Array): Buffer {
  return Buffer.from(input)
}

/** decompressInto for none: the bytes copied into `output`, or -1 when they do not fit. */
function copyInto(input: Uint8Array, output: Buffer): number {
  if (input.length > output.length) return -1
  output.set(input)
  return input.length
}

function copyWithin(input: Uint8Array, maxOutputBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  if (input.length > maxOutputBytes) throw outputLimitError('none', input.length, maxOutputBytes)
  return Buffer.from(input)
}

/**
 * A lookup that creates each codec-and-level instance once, for a holder that seals batches of several
 * specs (the producer's batch sealer, the compression thread). Each holder has its own: no global registry.
 */
export function codecCache(): (spec: CodecSpec) => Codec {
  const codecs = new Map<string, Codec>()
  return (spec) => {
    const key = formatCodecSpec(spec)
    let codec = codecs.get(key)
    if (codec === undefined) {
      codec = createCodec(spec)
      codecs.set(key, codec)
    }
    return codec
  }
}

const DECODERS = new Map<number, Codec>()

/** The codec that decompresses batches with this attributes id; decompression does not depend on the level. */
export function decoderForId(id: number): Codec | undefined {
  let codec = DECODERS.get(id)
  if (codec === undefined) {
    const name = CODEC_NAMES[id]
    if (name === undefined) return undefined
    codec = createCodec({ codec: name, level: null })
    DECODERS.set(id, codec)
  }
  return codec
}
