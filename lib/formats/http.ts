import { ErrorCodes, SqueezeError } from '../errors.js'
import { parseCombinedLine } from './combined-log.js'
import { HTTP_REQUEST_FIELD_COUNT, writeHttpRequest } from './http-request.js'
import { readHttpRequest } from './http-request-reader.js'
import type { LogFormat } from './log-format.js'

/** Access logs become Cap'n Proto HttpRequest records; decode walks every field with the fast reader. */
export const httpFormat: LogFormat = {
  kind: 'http',
  encodeLine(line: string): Buffer {
    return writeHttpRequest(parseCombinedLine(line))
  },
  decode(value: Uint8Array): number {
    const r = readHttpRequest(value)
    // Reading was the work; this guard only keeps the result observably used.
    if (r.status > 0xffff) throw new SqueezeError(ErrorCodes.DECODE_RECORD, 'impossible status')
    return HTTP_REQUEST_FIELD_COUNT
  }
}
