/** Timestamp renderings the text log kinds use. All UTC so output never depends on the host TZ. */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const

function p2(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

/** `Jun 19 21:30:43` (RFC 3164: day padded with a space). */
export function rfc3164Time(ms: number): string {
  const d = new Date(ms)
  const day = d.getUTCDate()
  return `${MONTHS[d.getUTCMonth()]} ${day < 10 ? ` ${day}` : day} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`
}

/** `2011/11/18 19:13:47` (nginx error_log). */
export function nginxTime(ms: number): string {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}/${p2(d.getUTCMonth() + 1)}/${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`
}
