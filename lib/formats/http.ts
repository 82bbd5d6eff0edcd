import { parseCombinedLine } from './combined-log.js'
import { HTTP_REQUEST_FIELD_COUNT } from './http-request.js'
import { maxHttpRequestBytes, writeHttpRequest, writeHttpRequestAt } from './http-request-writer.js'
import { checkHttpRequest, checkHttpRequestAt } from './http-request-reader.js'
import type { LogFormat, WrittenValueSink } from './log-format.js'

/**
 * Access logs become Cap'n Proto HttpRequest records. decode reads every field the zero-copy way
 * (checkHttpRequest): scalars read, text fields located and checked, no JS strings built; readHttpRequest
 * builds the plain object when the fields are wanted.
 */
export const httpFormat: LogFormat = {
  kind: 'http',
  encodeLine(line: string): Buffer {
    return writeHttpRequest(parseCombinedLine(line))
  },
  writeLine(line: string, sink: WrittenValueSink): Promise<void> | undefined {
    const fields = parseCombinedLine(line)
    return sink.put(maxHttpRequestBytes(fields), writeHttpRequestAt, fields)
  },
  decode(value: Uint8Array): number {
    // The text byte count keeps the reads observably used.
    return checkHttpRequest(value) >= 0 ? HTTP_REQUEST_FIELD_COUNT : 0
  },
  decodeAt(bytes: Buffer, start: number, end: number): number {
    return checkHttpRequestAt(bytes, start, end) >= 0 ? HTTP_REQUEST_FIELD_COUNT : 0
  }
}
