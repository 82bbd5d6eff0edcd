import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { LogFormat } from '../formats/index.js'
import type { Logger } from '../log/logger.js'
import type { Producer } from '../producer/producer.js'
import type { SourceItem } from '../sources/source.js'

/** What to do with a line its format cannot parse: count it and drop it, or count it and send the raw text. */
export type ParseErrorPolicy = 'skip' | 'raw'

export interface ProduceLogsSummary {
  itemsRead: number
  recordsSent: number
  parseErrors: number
  sentRaw: number
  rejected: number
}

export interface ProduceLogsArgs {
  readonly source: AsyncIterable<SourceItem>
  /** Parses text lines; null sends each line's text as the value. */
  readonly format: LogFormat | null
  readonly topic: string
  readonly producer: Producer
  readonly onParseError: ParseErrorPolicy
  readonly log: Logger
  readonly signal?: AbortSignal
  readonly onProgress?: (summary: Readonly<ProduceLogsSummary>) => void
  readonly progressEvery?: number
}

/** Source -> format -> producer. Bad lines are counted and handled by policy; nothing stops the stream. */
export async function produceLogs(args: ProduceLogsArgs): Promise<ProduceLogsSummary> {
  const summary: ProduceLogsSummary = { itemsRead: 0, recordsSent: 0, parseErrors: 0, sentRaw: 0, rejected: 0 }
  const progressEvery = args.progressEvery ?? 10000
  for await (const item of args.source) {
    if (args.signal?.aborted === true) break
    summary.itemsRead++
    let key: Buffer | null = null
    let value: Buffer
    let timestamp: number | undefined
    if (item.kind === 'record') {
      key = item.key
      value = item.value
      timestamp = item.timestampMs
    } else if (args.format === null) {
      value = Buffer.from(item.line)
    } else {
      try {
        value = args.format.encodeLine(item.line)
      } catch (err) {
        summary.parseErrors++
        if (summary.parseErrors <= 10 || summary.parseErrors % 1000 === 0) {
          args.log.warn({ line: summary.itemsRead, parseErrors: summary.parseErrors, reason: errorMessage(err), policy: args.onParseError }, 'line does not parse')
        }
        if (args.onParseError === 'skip') continue
        value = Buffer.from(item.line)
        summary.sentRaw++
      }
    }
    try {
      await args.producer.send({ topic: args.topic, key, value, ...(timestamp === undefined ? {} : { timestamp }) })
      summary.recordsSent++
    } catch (err) {
      if (err instanceof SqueezeError && err.code === ErrorCodes.RECORD_TOO_LARGE) {
        summary.rejected++
        args.log.error({ line: summary.itemsRead, code: err.code }, err.message)
        continue
      }
      throw err
    }
    if (summary.itemsRead % progressEvery === 0) args.onProgress?.(summary)
  }
  return summary
}
