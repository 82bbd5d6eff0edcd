import { ErrorCodes, SqueezeError } from '../errors.js'
import type { LogFormat } from './log-format.js'

/** `journalctl -o json` lines: the value is the JSON text as is, so decode is one JSON.parse. */

function parseObject(text: string): Record<string, unknown> | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null
}

export const journaldFormat: LogFormat = {
  kind: 'journald',
  encodeLine(line: string): Buffer {
    if (parseObject(line) === null) throw new SqueezeError(ErrorCodes.PARSE_LINE, 'not a JSON object')
    return Buffer.from(line, 'utf8')
  },
  decode(value: Uint8Array): number {
    const obj = parseObject(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'))
    if (obj === null) throw new SqueezeError(ErrorCodes.DECODE_RECORD, 'journald record is not a JSON object')
    let fields = 0
    for (const key in obj) if (Object.hasOwn(obj, key)) fields++
    return fields
  }
}
