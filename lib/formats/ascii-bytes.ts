/** ASCII bytes the formats' byte scanners look for, by name, shared so each scanner reads the same. */
export const TAB = 0x09
export const SPACE = 0x20
export const HASH = 0x23
export const DASH = 0x2d
export const DOT = 0x2e

/** An ASCII digit, 0-9. */
export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}
