import { ErrorCodes, SqueezeError } from '../../errors.js'

const UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, kib: 1024, k: 1024, kb: 1000, mib: 1024 ** 2, m: 1024 ** 2, mb: 1000 ** 2 }
/** The range Kafka's producer (and squeeze's -X batch.size) accepts. */
const BATCH_SIZE_RANGE = { min: 64, max: 64 * 1024 * 1024 } as const

/** --linger-ms 0,5,50,200,1000: whole milliseconds, no repeats. */
export function parseLingerList(text: string): number[] {
  return distinct('linger-ms', text.split(',').map((part) => {
    const n = Number(part.trim())
    if (part.trim() === '' || !Number.isInteger(n) || n < 0 || n > 3_600_000) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--linger-ms takes whole milliseconds from 0 to 3600000, comma-separated; got "${part}"`)
    return n
  }))
}

/** --batch-size 16KiB,128KiB,1MiB: bytes, with an optional B, KiB, MiB (or k, m; KB, MB are powers of 1000). */
export function parseBatchSizeList(text: string): number[] {
  return distinct('batch-size', text.split(',').map((part) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(part)
    const unit = UNITS[(match?.[2] ?? '').toLowerCase()]
    const bytes = match === null || unit === undefined ? Number.NaN : Math.round(Number(match[1]) * unit)
    if (!Number.isFinite(bytes) || bytes < BATCH_SIZE_RANGE.min || bytes > BATCH_SIZE_RANGE.max) {
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--batch-size takes sizes from 64 bytes to 64MiB such as 16KiB,128KiB,1MiB; got "${part}"`)
    }
    return bytes
  }))
}

function distinct(flag: string, values: number[]): number[] {
  if (new Set(values).size !== values.length) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--${flag} names the same value twice`)
  return values
}
