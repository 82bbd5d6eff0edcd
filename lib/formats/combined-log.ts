import { ErrorCodes, SqueezeError } from '../errors.js'
import { emptyHttpRequest, methodFromString } from './http-request.js'
import type { HttpRequestFields } from './http-request.js'
import { MinuteCache } from './minute-cache.js'

/**
 * Apache/nginx "combined" access log lines -> HttpRequest fields. Fields the combined format does
 * not carry (scheme, host, cache status, edge timings...) stay at their defaults.
 */

const COMBINED = /^(\S+) (\S+) (\S+) \[([^\]]+)\] "([^"]*)" (\d{3}) (\d+|-) "([^"]*)" "([^"]*)"$/
const TIME = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/
// HTTP/2 and HTTP/3 without a minor version, as some servers (and the HttpRequest schema's examples) write them.
const REQUEST = /^([A-Z]+) (\S+) (HTTP\/\d(?:\.\d)?)$/

/** Month abbreviations as log lines write them, to JavaScript's 0-based month numbers. */
export const MONTHS: Readonly<Record<string, number>> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11
}

function reject(reason: string): SqueezeError {
  return new SqueezeError(ErrorCodes.PARSE_LINE, reason)
}

function dashIsEmpty(value: string): string {
  return value === '-' ? '' : value
}

// Where `ss` starts in `17/May/2015:10:05:03 +0000`.
const lastMinute = new MinuteCache(18)

// The last time converted to nanoseconds: lines of the same second share it (a BigInt is immutable), so most
// lines allocate no BigInt for their time.
let lastMs = NaN
let lastNs = 0n

/** `17/May/2015:10:05:03 +0000` -> unix epoch nanoseconds. */
export function parseCombinedTime(value: string): bigint {
  const cached = lastMinute.lookup(value)
  const ms = Number.isNaN(cached) ? parseTimeMs(value) : cached
  if (ms !== lastMs) {
    lastNs = BigInt(ms) * 1_000_000n
    lastMs = ms
  }
  return lastNs
}

/** A response size in bytes: through a Number where that is exact (BigInt of a string parses it more slowly). */
function sizeBytes(digits: string): bigint {
  return digits.length <= 15 ? BigInt(Number(digits)) : BigInt(digits)
}

function parseTimeMs(value: string): number {
  const m = TIME.exec(value)
  const month = m === null ? undefined : MONTHS[m[2] as string]
  if (m === null || month === undefined) throw reject(`bad timestamp "${value.slice(0, 40)}"`)
  const sign = m[7] === '-' ? -1 : 1
  const offsetMin = sign * (Number(m[8]) * 60 + Number(m[9]))
  const seconds = Number(m[6])
  const utcMs = Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), seconds) - offsetMin * 60_000
  lastMinute.store(value, utcMs, seconds)
  return utcMs
}

/** Parses one combined-format line. Throws SqueezeError(PARSE_LINE) naming what did not parse. */
export function parseCombinedLine(line: string): HttpRequestFields {
  const m = COMBINED.exec(line)
  if (m === null) {
    // A quote count that is odd is the common real-world failure (truncated user agent); say so.
    const quotes = line.split('"').length - 1
    throw reject(
      quotes % 2 === 1 ? 'not combined log format: unbalanced quotes (truncated field?)' : 'not combined log format'
    )
  }
  // Indexed, not destructured: destructuring went through the array iterator on every line.
  const request = m[5] as string
  const bytes = m[7] as string
  const req = REQUEST.exec(request)
  if (req === null) throw reject(`bad request line "${request.slice(0, 60)}"`)
  const target = req[2] as string
  const q = target.indexOf('?')
  const fields = emptyHttpRequest()
  fields.timestampNs = parseCombinedTime(m[4] as string)
  fields.clientIp = m[1] as string
  fields.ident = dashIsEmpty(m[2] as string)
  fields.remoteUser = dashIsEmpty(m[3] as string)
  fields.method = methodFromString(req[1] as string)
  fields.path = q < 0 ? target : target.slice(0, q)
  fields.query = q < 0 ? '' : target.slice(q + 1)
  fields.protocol = req[3] as string
  fields.status = Number(m[6])
  fields.responseBytes = bytes === '-' ? 0n : sizeBytes(bytes)
  fields.referer = dashIsEmpty(m[8] as string)
  fields.userAgent = dashIsEmpty(m[9] as string)
  return fields
}
