// Byte offsets of the RecordBatch (magic 2) header fields.
export const BATCH = {
  BASE_OFFSET: 0,
  LENGTH: 8,
  PARTITION_LEADER_EPOCH: 12,
  MAGIC: 16,
  CRC: 17,
  ATTRIBUTES: 21,
  LAST_OFFSET_DELTA: 23,
  BASE_TIMESTAMP: 27,
  MAX_TIMESTAMP: 35,
  PRODUCER_ID: 43,
  PRODUCER_EPOCH: 51,
  BASE_SEQUENCE: 53,
  RECORD_COUNT: 57,
  HEADER_BYTES: 61,
  /** baseOffset and batchLength precede what batchLength counts. */
  LOG_OVERHEAD: 12
} as const

export const ATTRIBUTE = {
  CODEC_MASK: 0x07,
  TIMESTAMP_LOG_APPEND: 0x08,
  TRANSACTIONAL: 0x10,
  CONTROL: 0x20
} as const
