/** One Kafka record header. Keys are strings in every client; values are bytes (or null). */
export interface RecordHeader {
  readonly key: string
  readonly value: Buffer | null
}

/** Headers many records share: as objects, and as the headers section a batch holds them (encodeHeaders). */
export interface SharedHeaders {
  readonly list: readonly RecordHeader[]
  readonly bytes: Buffer
}

/** A record as squeeze produces it: the value bytes are already encoded by a log format. */
export interface OutgoingRecord {
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers?: readonly RecordHeader[]
  /** Milliseconds since the epoch; the producer stamps Date.now() when absent. */
  readonly timestamp?: number
}

/** A record read back from a batch. Key, value and header values are views into the decompressed batch. */
export interface IncomingRecord {
  readonly offset: number
  readonly timestamp: number
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: readonly RecordHeader[]
}

/**
 * Records of one batch as read, not decoded: record i's key, value and headers are `bytes[starts[i], ends[i])`,
 * encoded exactly as in the batch (their length varints included). Re-batching changes only a record's
 * timestamp and offset deltas in front of them, so a batch builder copies them whole (tryAppendRaw).
 */
export interface RawRecords {
  readonly count: number
  /** The decompressed records section every range points into. */
  readonly bytes: Buffer
  readonly offsets: Float64Array
  readonly timestamps: Float64Array
  readonly starts: Int32Array
  readonly ends: Int32Array
  /** Bytes of record i's key, value and header keys and values: its size as the copier counts source bytes. */
  readonly dataBytes: Int32Array
}
