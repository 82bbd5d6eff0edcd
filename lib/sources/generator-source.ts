import { createGenerator } from '../generators/index.js'
import type { LogKind } from '../formats/index.js'
import type { SourceItem } from './source.js'

export interface GeneratorSourceOptions {
  readonly kind: LogKind
  readonly seed: number
  /** Stop after this many records; unbounded when absent (until the signal aborts). */
  readonly records?: number
  /** Records per second; as fast as the producer takes them when absent. */
  readonly ratePerSecond?: number
  readonly signal?: AbortSignal
}

/** Seeded synthetic logs: the same seed always gives the same records, so codecs compare on equal input. */
export async function* generateRecords(options: GeneratorSourceOptions): AsyncGenerator<SourceItem> {
  const generator = createGenerator(options.kind, { seed: options.seed })
  const limit = options.records ?? Number.POSITIVE_INFINITY
  const started = Date.now()
  for (let i = 0; i < limit; i++) {
    if (options.signal?.aborted === true) return
    if (options.ratePerSecond !== undefined) {
      const due = started + (i * 1000) / options.ratePerSecond
      const wait = due - Date.now()
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    }
    const record = generator.next()
    yield { kind: 'record', key: record.key, value: record.value, timestampMs: record.timestampMs }
  }
}
