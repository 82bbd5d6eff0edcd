import { parseCombinedLine } from './combined-log.js'
import { CombinedTimeOfBytes, scanCombinedLine, TIMESTAMP_SLOT, type TimeSpan } from './combined-log-bytes.js'
import { HTTP_REQUEST_FIELD_COUNT } from './http-request.js'
import {
  emptyHttpRequestSpans,
  maxHttpRequestBytes,
  maxHttpRequestSpansBytes,
  writeHttpRequest,
  writeHttpRequestAt,
  writeHttpRequestSpansAt
} from './http-request-writer.js'
import { checkHttpRequest, checkHttpRequestAt } from './http-request-reader.js'
import { checkHttpValues, httpLinePass } from './http-native.js'
import type { LogFormat, WrittenValueSink } from './log-format.js'

function writeLine(line: string, sink: WrittenValueSink): Promise<void> | undefined {
  const fields = parseCombinedLine(line)
  return sink.put(maxHttpRequestBytes(fields), writeHttpRequestAt, fields)
}

// One line at a time is read in place: these are filled again for each (sink.put writes the record before it returns).
const spans = emptyHttpRequestSpans()
const time: TimeSpan = { start: 0, end: 0 }
const timeOfBytes = new CombinedTimeOfBytes()

/**
 * Access logs become Cap'n Proto HttpRequest records. decode reads every field the zero-copy way
 * (checkHttpRequest): scalars read, text fields located and checked, no JS strings built; readHttpRequest
 * builds the plain object when the fields are wanted. Lines read as bytes are parsed in place where they can be:
 * a chunk's in C (linePass, http-native.ts) for the plain lines it takes, else each in TypeScript
 * (writeLineBytes: scanCombinedLine), else as text.
 */
export const httpFormat: LogFormat = {
  kind: 'http',
  encodeLine(line: string): Buffer {
    return writeHttpRequest(parseCombinedLine(line))
  },
  writeLine,
  writeLineBytes(bytes: Buffer, start: number, end: number, sink: WrittenValueSink): Promise<void> | undefined {
    if (!scanCombinedLine(bytes, start, end, spans, time)) return writeLine(bytes.toString('utf8', start, end), sink)
    timeOfBytes.set(bytes, time.start, time.end, spans.u64, TIMESTAMP_SLOT)
    return sink.put(maxHttpRequestSpansBytes(spans), writeHttpRequestSpansAt, spans)
  },
  linePass: httpLinePass,
  decode(value: Uint8Array): number {
    // The text byte count keeps the reads observably used.
    return checkHttpRequest(value) >= 0 ? HTTP_REQUEST_FIELD_COUNT : 0
  },
  decodeAt(bytes: Buffer, start: number, end: number): number {
    return checkHttpRequestAt(bytes, start, end) >= 0 ? HTTP_REQUEST_FIELD_COUNT : 0
  },
  decodeValues: checkHttpValues
}
