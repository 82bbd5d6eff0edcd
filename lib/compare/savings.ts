import type { CompareReport } from './compare-report.js'
import { isKnownRate } from './ingest-rate.js'
import { savedShareVsNone } from './recommend.js'

const GIB = 1024 ** 3
const SECONDS_PER_DAY = 86_400

/**
 * One target's saving against `none`, split by where the bytes are saved: on the brokers' disks every replica
 * holds the topic (x replication factor), and every consumer group fetches it once (x consumers). Negative when
 * the target stores more than `none`.
 */
export interface SavingVsNone {
  readonly target: string
  /** Disk bytes per day, all replicas; null without a trustworthy ingest rate or a none target. */
  readonly storedBytesPerDaySaved: number | null
  /** Fetch-traffic bytes per day, all consumer groups; null without a trustworthy ingest rate or a none target. */
  readonly fetchBytesPerDaySaved: number | null
  /** Disk bytes per GiB of uncompressed input, all replicas; null without a none target. */
  readonly storedBytesSavedPerGiB: number | null
  /** Fetch-traffic bytes per GiB of uncompressed input, all consumer groups; null without a none target. */
  readonly fetchBytesSavedPerGiB: number | null
}

/** Every target's saving against `none`, with what it was multiplied by. */
export interface SavingsVsNone {
  /** Uncompressed bytes per day the source receives: its ingest rate x 86,400; null when the rate is unknown. */
  readonly ingestBytesPerDay: number | null
  readonly replicationFactor: number
  readonly consumers: number
  /** One per target, in the targets' order. */
  readonly targets: readonly SavingVsNone[]
}

/**
 * What each target saves against `none` per day at the source's ingest rate (and per GiB of input), on disk
 * and in fetch traffic separately: the two cost different things (storage, network), and the replication
 * factor and the number of consumer groups scale them independently.
 */
export function savingsVsNone(report: Pick<CompareReport, 'targets' | 'source' | 'settings'>): SavingsVsNone {
  const { replicationFactor, consumers } = report.settings
  const rate = report.source.ingestRate
  const ingestBytesPerDay = isKnownRate(rate) ? rate.bytesPerSecond * SECONDS_PER_DAY : null
  const scaled = (share: number | null, per: number | null, times: number): number | null =>
    share === null || per === null ? null : per * share * times
  return {
    ingestBytesPerDay,
    replicationFactor,
    consumers,
    targets: report.targets.map((t) => {
      const share = savedShareVsNone(report.targets, t)
      return {
        target: t.target,
        storedBytesPerDaySaved: scaled(share, ingestBytesPerDay, replicationFactor),
        fetchBytesPerDaySaved: scaled(share, ingestBytesPerDay, consumers),
        storedBytesSavedPerGiB: scaled(share, GIB, replicationFactor),
        fetchBytesSavedPerGiB: scaled(share, GIB, consumers)
      }
    })
  }
}
