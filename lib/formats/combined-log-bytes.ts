import { parseCombinedTime } from './combined-log.js'
import { HTTP_METHODS } from './http-request.js'
import { setU64, setU64FromBigInt, textSlot, u64Slot, type HttpRequestSpans } from './http-request-writer.js'
import { DASH, DOT, isDigit, SPACE } from './ascii-bytes.js'

/**
 * The combined-log parser (combined-log.ts) done over a line's bytes, for the lines it can take in place: plain
 * ASCII lines that match the format and whose size has at most 15 digits. For those it finds what
 * parseCombinedLine finds, as byte ranges and numbers (HttpRequestSpans), and says where the timestamp is: the
 * caller turns that into nanoseconds (CombinedTimeOfBytes, which keeps parseCombinedTime's minute cache). For any
 * other line it returns false and the caller parses the line's text the usual way, which accepts it or throws the
 * reason. So the regexes stay the definition, and this is a faster way to the same record for the lines nearly
 * every access log is made of: no string per line or field, no match arrays, and text copied as bytes.
 *
 * Equivalence with the regexes, on ASCII: \S is any byte but space and \t\n\v\f\r, \d is 0-9, and every group
 * ends at the first byte that cannot continue it (a space, a quote, a bracket), so no backtracking could find
 * another split. The tests hold both to the same bytes on every corpus line and on fuzzed ones.
 */

// Where each field the combined format fills goes in the spans, from the schema.
const CLIENT_IP = textSlot('clientIp')
const IDENT = textSlot('ident')
const REMOTE_USER = textSlot('remoteUser')
const PATH = textSlot('path')
const QUERY = textSlot('query')
const PROTOCOL = textSlot('protocol')
const REFERER = textSlot('referer')
const USER_AGENT = textSlot('userAgent')
const RESPONSE_BYTES = u64Slot('responseBytes')
/** Where the caller puts the timestamp (CombinedTimeOfBytes.set). */
export const TIMESTAMP_SLOT = u64Slot('timestampNs')

const QUOTE = 0x22
const QUESTION = 0x3f
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
/** `HTTP/` */
const HTTP_SLASH = [0x48, 0x54, 0x54, 0x50, 0x2f]

/** Method names as bytes, by ordinal; UNKNOWN and OTHER are never matched (methodFromString maps them to OTHER). */
const METHOD_BYTES = HTTP_METHODS.map((name) => Buffer.from(name, 'latin1'))
const OTHER = HTTP_METHODS.indexOf('OTHER')

/** Where the timestamp between the brackets starts and ends, for the caller (see scanCombinedLine). */
export interface TimeSpan {
  start: number
  end: number
}

function isSpace(c: number): boolean {
  return c === SPACE || (c >= 0x09 && c <= 0x0d)
}

/** End of the run of non-space ASCII from `at` (\S+), or -1 at a byte above 0x7f. */
function nonSpaceEnd(src: Buffer, at: number, end: number): number {
  let i = at
  for (; i < end; i++) {
    const c = src[i] as number
    if (c > 0x7f) return -1
    if (isSpace(c)) break
  }
  return i
}

/** Index of the first `stop` byte from `at` (a [^stop]* run ends there), or -1 at a byte above 0x7f or none before `end`. */
function runEnd(src: Buffer, at: number, end: number, stop: number): number {
  for (let i = at; i < end; i++) {
    const c = src[i] as number
    if (c === stop) return i
    if (c > 0x7f) return -1
  }
  return -1
}

/** Sets text slot `slot` to `[from, to)`, or to empty where the field is a lone dash (the format's "no value"). */
function setDashable(text: Int32Array, slot: number, src: Buffer, from: number, to: number): void {
  const dash = to - from === 1 && src[from] === DASH
  text[slot] = dash ? 0 : from
  text[slot + 1] = dash ? 0 : to
}

/** End of the run of capital letters from `at` ([A-Z]*, the method's name). */
function upperCaseEnd(src: Buffer, at: number, end: number): number {
  let i = at
  while (i < end && (src[i] as number) >= 0x41 && (src[i] as number) <= 0x5a) i++
  return i
}

/** Whether `src[from, to)` is a protocol the format takes: `HTTP/` and a digit, with or without `.` and a digit. */
function isHttpVersion(src: Buffer, from: number, to: number): boolean {
  const length = to - from
  if (length !== 8 && length !== 6) return false
  for (let k = 0; k < HTTP_SLASH.length; k++) if (src[from + k] !== HTTP_SLASH[k]) return false
  if (!isDigit(src[from + 5] as number)) return false
  return length === 6 || (src[from + 6] === DOT && isDigit(src[from + 7] as number))
}

/** Index of the first `byte` in `src[from, to)`, or -1 when there is none. */
function byteIndex(src: Buffer, from: number, to: number, byte: number): number {
  for (let i = from; i < to; i++) if (src[i] === byte) return i
  return -1
}

/** The method's ordinal, as methodFromString gives it for the text of `src[from, to)` ([A-Z]+). */
function methodOrdinal(src: Buffer, from: number, to: number): number {
  const length = to - from
  for (let m = 1; m < OTHER; m++) {
    const name = METHOD_BYTES[m] as Buffer
    if (name.length !== length) continue
    let i = 0
    while (i < length && name[i] === src[from + i]) i++
    if (i === length) return m
  }
  return OTHER
}

/**
 * Reads the combined-log line `src[start, end)` into `out` (src, text ranges, method, status, responseBytes; the
 * caller sets the timestamp from `time`) and returns true; or returns false for a line to parse as text instead.
 */
export function scanCombinedLine(
  src: Buffer,
  start: number,
  end: number,
  out: HttpRequestSpans,
  time: TimeSpan
): boolean {
  const text = out.text
  // (\S+) (\S+) (\S+) \[
  const ipEnd = nonSpaceEnd(src, start, end)
  if (ipEnd <= start || src[ipEnd] !== SPACE || ipEnd >= end) return false
  const identEnd = nonSpaceEnd(src, ipEnd + 1, end)
  if (identEnd <= ipEnd + 1 || identEnd >= end || src[identEnd] !== SPACE) return false
  const userEnd = nonSpaceEnd(src, identEnd + 1, end)
  if (userEnd <= identEnd + 1 || userEnd + 1 >= end || src[userEnd] !== SPACE || src[userEnd + 1] !== OPEN_BRACKET)
    return false
  // ([^\]]+)\] "
  const timeStart = userEnd + 2
  const timeEnd = runEnd(src, timeStart, end, CLOSE_BRACKET)
  if (timeEnd <= timeStart || timeEnd + 2 >= end || src[timeEnd + 1] !== SPACE || src[timeEnd + 2] !== QUOTE)
    return false
  // ([^"]*)" (\d{3}) (\d+|-) "
  const requestStart = timeEnd + 3
  const requestEnd = runEnd(src, requestStart, end, QUOTE)
  let i = requestEnd + 1
  if (requestEnd < 0 || i + 5 >= end || src[i] !== SPACE) return false
  const s0 = src[i + 1] as number
  const s1 = src[i + 2] as number
  const s2 = src[i + 3] as number
  if (!isDigit(s0) || !isDigit(s1) || !isDigit(s2) || src[i + 4] !== SPACE) return false
  i += 5
  let size = 0
  if (src[i] === DASH) {
    i++
  } else {
    const digits = i
    for (; i < end && isDigit(src[i] as number); i++) size = size * 10 + (src[i] as number) - 0x30
    // Up to 15 digits a Number holds the size exactly; longer ones go the text way (a BigInt of the digits).
    if (i === digits || i - digits > 15) return false
  }
  if (i + 1 >= end || src[i] !== SPACE || src[i + 1] !== QUOTE) return false
  // ([^"]*)" "([^"]*)"$
  const refererStart = i + 2
  const refererEnd = runEnd(src, refererStart, end, QUOTE)
  if (refererEnd < 0 || refererEnd + 2 >= end || src[refererEnd + 1] !== SPACE || src[refererEnd + 2] !== QUOTE)
    return false
  const agentStart = refererEnd + 3
  const agentEnd = runEnd(src, agentStart, end, QUOTE)
  if (agentEnd !== end - 1) return false
  // The request: ([A-Z]+) (\S+) (HTTP\/\d(?:\.\d)?)$
  const methodEnd = upperCaseEnd(src, requestStart, requestEnd)
  if (methodEnd === requestStart || src[methodEnd] !== SPACE || methodEnd >= requestEnd) return false
  const targetEnd = nonSpaceEnd(src, methodEnd + 1, requestEnd)
  const protocolStart = targetEnd + 1
  if (targetEnd <= methodEnd + 1 || src[targetEnd] !== SPACE) return false
  if (!isHttpVersion(src, protocolStart, requestEnd)) return false
  // Every byte not checked above was checked to be ASCII by the runs; the timestamp is the caller's to parse.
  const question = byteIndex(src, methodEnd + 1, targetEnd, QUESTION)
  out.src = src
  text[CLIENT_IP] = start
  text[CLIENT_IP + 1] = ipEnd
  setDashable(text, IDENT, src, ipEnd + 1, identEnd)
  setDashable(text, REMOTE_USER, src, identEnd + 1, userEnd)
  text[PATH] = methodEnd + 1
  text[PATH + 1] = question < 0 ? targetEnd : question
  text[QUERY] = question < 0 ? 0 : question + 1
  text[QUERY + 1] = question < 0 ? 0 : targetEnd
  text[PROTOCOL] = protocolStart
  text[PROTOCOL + 1] = requestEnd
  setDashable(text, REFERER, src, refererStart, refererEnd)
  setDashable(text, USER_AGENT, src, agentStart, agentEnd)
  const values = out.values
  values.method = methodOrdinal(src, requestStart, methodEnd)
  values.status = (s0 - 0x30) * 100 + (s1 - 0x30) * 10 + (s2 - 0x30)
  setU64(out.u64, RESPONSE_BYTES, size)
  time.start = timeStart
  time.end = timeEnd
  return true
}

/** Longest timestamp kept as the last one seen; the format's own is 26 bytes. */
const TIME_KEY_BYTES = 64
/** Where `ss` starts in `17/May/2015:10:05:03 +0000`. */
const SECONDS_AT = 18

const TWO_11 = 2 ** 11
const TWO_21 = 2 ** 21
const TWO_32 = 2 ** 32
const NS_PER_MS = 1_000_000

/**
 * The timestamp of a line's bytes, as parseCombinedTime gives it for its text, put into a record's u64 halves, with
 * parseCombinedTime's minute cache done on the bytes: a timestamp that differs from the last one parsed only in its
 * two seconds digits is that minute plus its seconds, with no string made. Any other is parsed as text (which
 * throws the text parser's reason for a bad one). Nanoseconds are written from the milliseconds with exact
 * double arithmetic, so a line costs no bigint.
 */
export class CombinedTimeOfBytes {
  private readonly key = Buffer.alloc(TIME_KEY_BYTES)
  private keyLength = -1
  private minuteMs = 0

  /** Sets `u64[slot]` and `u64[slot + 1]` to the nanoseconds of the timestamp `src[start, end)`. */
  set(src: Buffer, start: number, end: number, u64: Uint32Array, slot: number): void {
    const ms = this.cached(src, start, end)
    if (Number.isNaN(ms)) {
      const ns = parseCombinedTime(src.toString('latin1', start, end))
      this.remember(src, start, end, Number(ns / 1_000_000n))
      setU64FromBigInt(u64, slot, ns)
    } else if (ms >= 0 && ms <= Number.MAX_SAFE_INTEGER) {
      setNanosFromMillis(u64, slot, ms)
    } else {
      setU64FromBigInt(u64, slot, BigInt(ms) * 1_000_000n)
    }
  }

  /** The time in ms when `src[start, end)` is the remembered minute's, else NaN. */
  private cached(src: Buffer, start: number, end: number): number {
    const key = this.key
    if (end - start !== this.keyLength) return NaN
    for (let i = 0; i < SECONDS_AT; i++) if (src[start + i] !== key[i]) return NaN
    for (let i = SECONDS_AT + 2; i < this.keyLength; i++) if (src[start + i] !== key[i]) return NaN
    const tens = (src[start + SECONDS_AT] as number) - 0x30
    const ones = (src[start + SECONDS_AT + 1] as number) - 0x30
    if (tens < 0 || tens > 9 || ones < 0 || ones > 9) return NaN
    return this.minuteMs + (tens * 10 + ones) * 1000
  }

  /** Keeps a timestamp that parsed to `ms` as the minute to match, where its seconds are two digits. */
  private remember(src: Buffer, start: number, end: number, ms: number): void {
    const length = end - start
    const tens = (src[start + SECONDS_AT] as number) - 0x30
    const ones = (src[start + SECONDS_AT + 1] as number) - 0x30
    if (length > TIME_KEY_BYTES || length < SECONDS_AT + 2 || tens < 0 || tens > 9 || ones < 0 || ones > 9) {
      this.keyLength = -1
      return
    }
    src.copy(this.key, 0, start, end)
    this.keyLength = length
    this.minuteMs = ms - (tens * 10 + ones) * 1000
  }
}

/**
 * `ms * 1e6` into u64 halves, exactly, for an integer `ms` from 0 to 2^53 (the product needs up to 73 bits; its
 * low 64 are kept, as setBigUint64 would). Every intermediate stays below 2^53, where doubles are exact:
 * ms = h * 2^21 + l, so ms * 1e6 = (h * 1e6) * 2^21 + l * 1e6; with p = h * 1e6 = ph * 2^11 + pl, that is
 * ph * 2^32 + (pl * 2^21 + l * 1e6).
 */
export function setNanosFromMillis(u64: Uint32Array, slot: number, ms: number): void {
  const low21 = ms % TWO_21
  const product = ((ms - low21) / TWO_21) * NS_PER_MS
  const productLow11 = product % TWO_11
  const rest = productLow11 * TWO_21 + low21 * NS_PER_MS
  const restLow = rest % TWO_32
  u64[slot] = restLow
  u64[slot + 1] = ((product - productLow11) / TWO_11 + (rest - restLow) / TWO_32) % TWO_32
}
