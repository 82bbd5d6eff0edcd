/** One batch line of `kafka.tools.DumpLogSegments --files <x.log> [--deep-iteration]`. */
export interface DumpedBatch {
  /** The segment file the batch came from (the preceding `Dumping <file>` line), if any. */
  readonly file?: string
  readonly baseOffset: number
  readonly lastOffset: number
  readonly count: number
  /** Bytes of the whole batch in the segment, log overhead included (what a fetch returns). */
  readonly size: number
  /** As Kafka prints it, lower-cased: none, gzip, snappy, lz4, zstd. */
  readonly codec: string
  readonly crc: number
  readonly isValid: boolean
  readonly isControl: boolean
  readonly isTransactional: boolean
  readonly producerId: number
  readonly position: number
}

/**
 * Parses DumpLogSegments output (Kafka 4.x). Batch lines look like
 * `baseOffset: 0 lastOffset: 299 count: 300 baseSequence: 0 … position: 0 CreateTime: … size: 2108 magic: 2
 * compresscodec: gzip crc: 3770406467 isvalid: true`; record lines (`| offset: …`, with --deep-iteration)
 * and everything else are ignored.
 */
export function parseDumpLogSegments(stdout: string): DumpedBatch[] {
  const batches: DumpedBatch[] = []
  let file: string | undefined
  for (const raw of stdout.split('\n')) {
    const line = raw.trim()
    if (line.startsWith('Dumping ')) {
      file = line.slice('Dumping '.length).trim()
      continue
    }
    if (!line.startsWith('baseOffset:')) continue
    const fields = new Map<string, string>()
    for (const match of line.matchAll(/(\w+): (\S+)/g)) {
      const name = match[1]
      const value = match[2]
      if (name !== undefined && value !== undefined && !fields.has(name)) fields.set(name, value)
    }
    const num = (name: string): number => {
      const text = fields.get(name)
      const value = text === undefined ? Number.NaN : Number(text)
      if (!Number.isFinite(value)) throw new Error(`DumpLogSegments batch line lacks a numeric ${name}: ${line}`)
      return value
    }
    const codec = fields.get('compresscodec')
    if (codec === undefined) throw new Error(`DumpLogSegments batch line lacks compresscodec: ${line}`)
    batches.push({
      ...(file !== undefined ? { file } : {}),
      baseOffset: num('baseOffset'),
      lastOffset: num('lastOffset'),
      count: num('count'),
      size: num('size'),
      codec: codec.toLowerCase(),
      crc: num('crc'),
      isValid: fields.get('isvalid') === 'true',
      isControl: fields.get('isControl') === 'true',
      isTransactional: fields.get('isTransactional') === 'true',
      producerId: num('producerId'),
      position: num('position')
    })
  }
  return batches
}
