import type { Admin } from 'kafkajs'
import { errorMessage } from '../errors.js'
import { rateFromSpan, robustSpan, type CountSince, type IngestRate } from './ingest-rate.js'

/** How far back compare asks the broker about a topic's ingest by default: long enough to smooth a daily cycle's hour. */
export const DEFAULT_RATE_LOOKBACK_MS = 24 * 3600 * 1000

/**
 * Records of `topic` stamped at or after a time: end offsets (read once, so a live topic's growth during the
 * search does not skew it) minus ListOffsets-by-timestamp's answer, the first offset stamped at or after it.
 */
export async function brokerCountSince(admin: Admin, topic: string): Promise<CountSince> {
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, Number(o.high)]))
  return async (ms: number): Promise<number> => {
    let records = 0
    for (const { partition, offset } of await admin.fetchTopicOffsetsByTimestamp(topic, ms)) {
      records += Math.max(0, (ends.get(partition) ?? 0) - Number(offset))
    }
    return records
  }
}

/**
 * The topic's own ingest rate over the last `lookbackMs`: records counted from offsets by timestamp, times the
 * bytes per record compare measured. Offsets count compaction gaps and transaction markers as records, a small
 * overstatement on such topics. Its broker round trips come first, and the rate is a function of the bytes per record, which a caller knows
 * only after reading the records: started before the read, the round trips overlap it instead of following it.
 * Never rejects: a failed lookup gives an unknown rate.
 */
export async function topicIngestRateLookup(
  admin: Admin,
  topic: string,
  options: { lookbackMs: number; nowMs: number }
): Promise<(bytesPerRecord: number) => IngestRate> {
  return rateFromOffsets(
    admin,
    topic,
    { fromMs: options.nowMs - options.lookbackMs, toMs: options.nowMs },
    {
      over: `the last ${formatHours(options.lookbackMs)}`,
      lookbackSeconds: options.lookbackMs / 1000,
      withinOnly: false
    }
  )
}

/**
 * The topic's ingest rate over the time span a sample covers (its earliest to its latest record), from offsets
 * by timestamp as above: the bytes per day then rest on the same stretch of the topic as the sampled ratio.
 * Records stamped after the span are left out (the sample's last window ends before the topic does).
 */
export async function sampledSpanIngestRate(
  admin: Admin,
  topic: string,
  bytesPerRecord: number,
  span: { fromMs: number; toMs: number }
): Promise<IngestRate> {
  return (
    await rateFromOffsets(admin, topic, span, {
      over: 'the sampled time span',
      lookbackSeconds: null,
      withinOnly: true
    })
  )(bytesPerRecord)
}

async function rateFromOffsets(
  admin: Admin,
  topic: string,
  range: { fromMs: number; toMs: number },
  how: { over: string; lookbackSeconds: number | null; withinOnly: boolean }
): Promise<(bytesPerRecord: number) => IngestRate> {
  try {
    const countSince = await brokerCountSince(admin, topic)
    const later = how.withinOnly ? await countSince(Math.floor(range.toMs) + 1) : 0
    const span = await robustSpan(async (ms) => Math.max(0, (await countSince(ms)) - later), range)
    if ('unknown' in span) return () => ({ unknown: `broker offsets over ${how.over}: ${span.unknown}` })
    return (bytesPerRecord) => rateFromSpan(span, bytesPerRecord, 'broker-offsets', how.lookbackSeconds)
  } catch (err) {
    return () => ({ unknown: `broker offsets over ${how.over}: ${errorMessage(err)}` })
  }
}

function formatHours(ms: number): string {
  const hours = ms / 3_600_000
  return hours >= 1 ? `${Number(hours.toFixed(2))} h` : `${Number((ms / 1000).toFixed(1))} s`
}
