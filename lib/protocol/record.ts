/** One Kafka record header. Keys are strings in every client; values are bytes (or null). */
export interface RecordHeader {
  readonly key: string
  readonly value: Buffer | null
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
