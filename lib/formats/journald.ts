import { ErrorCodes, SqueezeError } from '../errors.js'
import { lineAsValue, type LogFormat } from './log-format.js'

/** `journalctl -o json` lines: the value is the JSON text as is, so decode is one JSON.parse. */

// A flat object of strings, numbers and literals is what journald writes (but for MESSAGE as a byte array when
// it is not UTF-8). A line FLAT_OBJECT matches is one JSON.parse accepts as an object, and the match costs a
// quarter of JSON.parse building it; any other line goes to JSON.parse. Linear time: every string, number and
// separator matches in one way only (the string is the unrolled-loop form).
const SPACE = String.raw`[ \t\n\r]*`
const STRING = String.raw`"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"`
const SCALAR = String.raw`(?:${STRING}|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)`
const MEMBER = `${STRING}${SPACE}:${SPACE}${SCALAR}${SPACE}`
const FLAT_OBJECT = new RegExp(`^${SPACE}\\{${SPACE}(?:${MEMBER}(?:,${SPACE}${MEMBER})*)?\\}${SPACE}$`)

function parseObject(text: string): Record<string, unknown> | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : null
}

function checkJournaldLine(line: string): void {
  if (!FLAT_OBJECT.test(line) && parseObject(line) === null)
    throw new SqueezeError(ErrorCodes.PARSE_LINE, 'not a JSON object')
}

export const journaldFormat: LogFormat = {
  kind: 'journald',
  ...lineAsValue(checkJournaldLine),
  decode(value: Uint8Array): number {
    const obj = parseObject(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'))
    if (obj === null) throw new SqueezeError(ErrorCodes.DECODE_RECORD, 'journald record is not a JSON object')
    let fields = 0
    for (const key in obj) if (Object.hasOwn(obj, key)) fields++
    return fields
  }
}
