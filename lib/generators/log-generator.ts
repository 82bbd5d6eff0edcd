/** One generated Kafka record: key (null when the kind has no natural key), value, event time. */
export interface GeneratedRecord {
  key: Buffer | null
  value: Buffer
  timestampMs: number
}

export interface GeneratorOptions {
  seed: number
  /** Event time of the first record; defaults to a fixed instant so output depends on the seed only. */
  startTimeMs?: number
}

export interface LogGenerator {
  next(): GeneratedRecord
}

/** 2024-03-04T09:00:00Z: a Monday morning, so diurnal-looking traffic starts busy. */
export const DEFAULT_START_MS = Date.UTC(2024, 2, 4, 9, 0, 0)
