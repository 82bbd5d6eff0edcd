import type { HttpRequestFields } from './http-request.js'

/**
 * An HttpRequest record rendered back as text, the two forms an operator might store instead of Cap'n Proto:
 * the combined log line (the fields that format carries; its time in UTC) and JSON of every field.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const

function p2(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

/** `17/May/2015:10:05:03 +0000` from epoch nanoseconds. */
function combinedTime(timestampNs: bigint): string {
  const d = new Date(Number(timestampNs / 1_000_000n))
  const day = `${p2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}`
  return `${day}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000`
}

function dashIfEmpty(value: string): string {
  return value === '' ? '-' : value
}

/** The combined log line parseCombinedLine reads back into the same fields (the time's offset becomes +0000). */
export function combinedLogLine(f: HttpRequestFields): string {
  const target = f.query === '' ? f.path : `${f.path}?${f.query}`
  const who = `${f.clientIp} ${dashIfEmpty(f.ident)} ${dashIfEmpty(f.remoteUser)}`
  const bytes = f.responseBytes === 0n ? '-' : String(f.responseBytes)
  return (
    `${who} [${combinedTime(f.timestampNs)}] "${f.method} ${target} ${f.protocol}" ${f.status} ${bytes} ` +
    `"${dashIfEmpty(f.referer)}" "${dashIfEmpty(f.userAgent)}"`
  )
}

/** Every field as one JSON object, 64-bit integers as JSON numbers (exact below 2^53, which times in ns are not). */
export function httpRequestJson(f: HttpRequestFields): string {
  return JSON.stringify(f, (_key, value: unknown) => (typeof value === 'bigint' ? Number(value) : value))
}
