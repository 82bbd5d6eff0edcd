import { ErrorCodes, SqueezeError } from '../errors.js'
import { lineAsValue, type LogFormat, type LogKind } from './log-format.js'

/**
 * Shared shape of the plain-text kinds (nginx errors, dnsmasq, syslog): the record value is the
 * line's UTF-8 bytes, and decoding re-runs the line regex so consumers pay the real parse cost.
 * The regexes are anchored and free of nested quantifiers, so arbitrary bytes parse in linear time. `accepts`
 * reads a line's bytes in place and returns true only for a line the regex takes (see lineAsValue): making each
 * line's text for the regex costs more than the regex does.
 */
export function regexLineFormat(
  kind: LogKind,
  pattern: RegExp,
  what: string,
  accepts: (bytes: Buffer, start: number, end: number) => boolean
): LogFormat {
  return {
    kind,
    ...lineAsValue((line) => {
      if (!pattern.test(line)) throw new SqueezeError(ErrorCodes.PARSE_LINE, `not a ${what} line`)
    }, accepts),
    decode(value: Uint8Array): number {
      const m = pattern.exec(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'))
      if (m === null) throw new SqueezeError(ErrorCodes.DECODE_RECORD, `record is not a ${what} line`)
      // Optional groups that did not participate were not there to read.
      let fields = 0
      for (let i = 1; i < m.length; i++) if (m[i] !== undefined) fields++
      return fields
    }
  }
}
