/**
 * The last timestamp a parser read, down to its minute. Lines come in time order, so most share the previous
 * line's minute and differ at most in the two seconds digits: then the time is the minute's plus the seconds,
 * with no regex and no date arithmetic. Sound because a string that differs from an accepted one only in two
 * digits where the format has two digits is accepted too, and its time is linear in the seconds.
 */
export class MinuteCache {
  private key = ''
  private minuteMs = 0

  /** `secondsAt`: where the two seconds digits start in the timestamp text. */
  constructor(private readonly secondsAt: number) {}

  /** The time of `text` in ms when it is the cached one's minute, else NaN (the caller parses and calls store). */
  lookup(text: string): number {
    const key = this.key
    const at = this.secondsAt
    if (text.length !== key.length) return NaN
    for (let i = 0; i < at; i++) if (text.charCodeAt(i) !== key.charCodeAt(i)) return NaN
    for (let i = at + 2; i < text.length; i++) if (text.charCodeAt(i) !== key.charCodeAt(i)) return NaN
    const tens = text.charCodeAt(at) - 48
    const ones = text.charCodeAt(at + 1) - 48
    if (tens < 0 || tens > 9 || ones < 0 || ones > 9) return NaN
    return this.minuteMs + (tens * 10 + ones) * 1000
  }

  /** Remembers `text`, which parsed to `ms` with `seconds` as its seconds field. */
  store(text: string, ms: number, seconds: number): void {
    this.key = text
    this.minuteMs = ms - seconds * 1000
  }
}
