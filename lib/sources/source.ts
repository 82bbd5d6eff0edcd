/** What a source yields: a text line still to be parsed, or a record a generator already encoded. */
export type SourceItem =
  /**
   * `bytes`, where the source has them and the text would not re-encode to them (bytes that are not valid UTF-8):
   * the line's bytes as read (no newline, no CR), a view of the read buffer, which the source never writes again;
   * a format whose record is the line itself sends them as they are, so such a line's bytes are kept.
   */
  | { readonly kind: 'line'; readonly line: string; readonly bytes?: Buffer }
  /** Without timestampMs the producer stamps the record when it sends it. */
  | { readonly kind: 'record'; readonly key: Buffer | null; readonly value: Buffer; readonly timestampMs?: number }

/** Items a source has ready at once: handed on together, so the pipeline pays no promise per line. */
export type SourceBatch = readonly SourceItem[]

/**
 * Whole lines as read, not yet split or decoded: `bytes[0, end)`, lines separated by '\n' (a CR before one is not
 * part of its line), the last ending at `end`. `bytes` is the source's read buffer: valid until the next chunk is
 * asked for.
 */
export interface LineChunk {
  readonly bytes: Buffer
  readonly end: number
}
