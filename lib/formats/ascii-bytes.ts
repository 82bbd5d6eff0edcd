/** ASCII bytes the formats' byte scanners look for, by name, shared so each scanner reads the same. */
export const TAB = 0x09
export const LF = 0x0a
export const CR = 0x0d
export const SPACE = 0x20
export const HASH = 0x23
export const DASH = 0x2d
export const DOT = 0x2e
export const COLON = 0x3a
export const OPEN_BRACKET = 0x5b
export const CLOSE_BRACKET = 0x5d

/** An ASCII digit, 0-9. */
export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}
