import { afterDigits, afterFixed, afterLiteral, isRestOfLine } from './line-bytes.js'
import type { LogFormat } from './log-format.js'
import { regexLineFormat } from './regex-line-format.js'

/** time, level, pid, tid, optional connection id, message (nginx default error_log format). */
export const NGINX_ERROR_LINE =
  /^(\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}) \[(debug|info|notice|warn|error|crit|alert|emerg)\] (\d+)#(\d+): (?:\*(\d+) )?(.*)$/

const TIME = 'dddd/dd/dd dd:dd:dd ['
const LEVELS = ['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg'].map((l) => Buffer.from(`${l}] `))
const PID_TID = Buffer.from('#')
const COLON_SPACE = Buffer.from(': ')

/**
 * NGINX_ERROR_LINE on a line's bytes. The connection id is optional and the message after it is `.*`, so whatever
 * follows the tid's `: ` matches if it is the rest of a line.
 */
export function acceptsNginxErrorLine(bytes: Buffer, start: number, end: number): boolean {
  const level = afterFixed(bytes, start, end, TIME)
  if (level < 0) return false
  let i = -1
  for (const name of LEVELS) if ((i = afterLiteral(bytes, level, end, name)) >= 0) break
  i = afterDigits(bytes, i, end) // pid
  i = afterLiteral(bytes, i, end, PID_TID)
  i = afterDigits(bytes, i, end) // tid
  i = afterLiteral(bytes, i, end, COLON_SPACE)
  return i >= 0 && isRestOfLine(bytes, i, end)
}

export const nginxErrorFormat: LogFormat = regexLineFormat(
  'nginx-error',
  NGINX_ERROR_LINE,
  'nginx error log',
  acceptsNginxErrorLine
)
