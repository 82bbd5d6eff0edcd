import { MONTHS, parseCombinedTime } from './combined-log.js'
import type { LogKind } from './log-format.js'

/** Reads the time each line of one file says it was logged, in order. */
export interface LineClock {
  /** Milliseconds since the epoch, or undefined when the line carries no time that parses. */
  read(line: string): number | undefined
  /**
   * What to add to every time read so far. Year-less formats (RFC 3164 syslog, dnsmasq) are dated from the
   * current year onwards; a file that then ends more than a day in the future was logged a year earlier.
   */
  correctionMs(): number
}

const DAY_MS = 86_400_000
// A year-less time this far before the previous line's is the next year (Dec 31 -> Jan 1), not disorder.
const ROLLOVER_MS = 180 * DAY_MS

const COMBINED_TIME = /\[(\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\]/
const NGINX_TIME = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2}) /
const RFC3164_TIME = /^([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) /
const JOURNALD_TIME = /"__REALTIME_TIMESTAMP"\s*:\s*"(\d+)"/
const ZEEK_TIME = /^(\d+(?:\.\d+)?)\t/

/**
 * The clock of one file of `kind`. Times without a zone (nginx, syslog, dnsmasq) are read as UTC: the span
 * between lines, which is what a rate needs, does not depend on the zone.
 */
export function lineClock(kind: LogKind, nowMs = Date.now()): LineClock {
  switch (kind) {
    case 'http':
      return stateless((line) => {
        const m = COMBINED_TIME.exec(line)
        if (m === null) return undefined
        try {
          return Number(parseCombinedTime(m[1] as string) / 1_000_000n)
        } catch {
          return undefined
        }
      })
    case 'nginx-error':
      return stateless((line) => {
        const m = NGINX_TIME.exec(line)
        return m === null
          ? undefined
          : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]))
      })
    case 'journald':
      return stateless((line) => {
        const m = JOURNALD_TIME.exec(line)
        return m === null ? undefined : Number(m[1]) / 1000
      })
    case 'dns-zeek':
      return stateless((line) => {
        const m = ZEEK_TIME.exec(line)
        return m === null ? undefined : Number(m[1]) * 1000
      })
    case 'syslog':
    case 'dns-dnsmasq':
      return yearlessClock(nowMs)
  }
}

function stateless(read: (line: string) => number | undefined): LineClock {
  return { read, correctionMs: () => 0 }
}

function yearlessClock(nowMs: number): LineClock {
  const firstYear = new Date(nowMs).getUTCFullYear()
  let year = firstYear
  let previous: number | undefined
  let latest = Number.NEGATIVE_INFINITY
  return {
    read(line: string): number | undefined {
      const m = RFC3164_TIME.exec(line)
      const month = m === null ? undefined : MONTHS[m[1] as string]
      if (m === null || month === undefined) return undefined
      const at = (y: number): number =>
        Date.UTC(y, month, Number((m[2] as string).trim()), Number(m[3]), Number(m[4]), Number(m[5]))
      let ms = at(year)
      if (previous !== undefined && ms < previous - ROLLOVER_MS) {
        year++
        ms = at(year)
      }
      previous = ms
      latest = Math.max(latest, ms)
      return ms
    },
    // One year back from the first year's start: off by a day for the dates a leap day separates, never the span.
    correctionMs: () => (latest > nowMs + DAY_MS ? Date.UTC(firstYear - 1, 0, 1) - Date.UTC(firstYear, 0, 1) : 0)
  }
}
