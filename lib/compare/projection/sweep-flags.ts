import { parseInteger } from '../../config/cli.js'
import { ErrorCodes, SqueezeError } from '../../errors.js'

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kib: 1024,
  k: 1024,
  kb: 1000,
  mib: 1024 ** 2,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  gib: 1024 ** 3,
  g: 1024 ** 3,
  gb: 1000 ** 3
}
const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/
/** The range Kafka's producer (and squeeze's -X batch.size) accepts. */
const BATCH_SIZE_RANGE = { min: 64, max: 64 * 1024 * 1024 } as const

/** --linger-ms 0,5,50,200,1000: whole milliseconds, no repeats. */
export function parseLingerList(text: string): number[] {
  return distinct(
    'linger-ms',
    text.split(',').map((part) => {
      const n = Number(part.trim())
      if (part.trim() === '' || !Number.isInteger(n) || n < 0 || n > 3_600_000)
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          `--linger-ms takes whole milliseconds from 0 to 3600000, comma-separated; got "${part}"`
        )
      return n
    })
  )
}

/** --batch-size 16KiB,128KiB,1MiB: bytes, with an optional B, KiB, MiB (or k, m; KB, MB are powers of 1000). */
export function parseBatchSizeList(text: string): number[] {
  return distinct(
    'batch-size',
    text.split(',').map((part) => {
      const bytes = parseSize(part)?.bytes ?? Number.NaN
      if (!Number.isFinite(bytes) || bytes < BATCH_SIZE_RANGE.min || bytes > BATCH_SIZE_RANGE.max) {
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          `--batch-size takes sizes from 64 bytes to 64MiB such as 16KiB,128KiB,1MiB; got "${part}"`
        )
      }
      return bytes
    })
  )
}

/** `16KiB`, `1MiB`, `4096`: bytes, and whether a unit was written; undefined when the text is not a size. */
export function parseSize(text: string): { bytes: number; unit: boolean } | undefined {
  const match = SIZE.exec(text)
  const unit = UNITS[(match?.[2] ?? '').toLowerCase()]
  if (match === null || unit === undefined) return undefined
  return { bytes: Math.round(Number(match[1]) * unit), unit: match[2] !== '' }
}

/** How much --sample reads: a bare number counts records, a size (64MiB) counts record bytes. */
export type SampleBudget = { readonly records: number } | { readonly bytes: number }

/** --sample 200000 (records) or --sample 64MiB (key, value and header bytes, as --bytes counts them). */
export function parseSampleBudget(text: string): SampleBudget {
  const size = parseSize(text)
  const whole =
    size !== undefined && Number.isSafeInteger(size.bytes) && size.bytes >= 1 && (size.unit || /^\s*\d+\s*$/.test(text))
  if (size === undefined || !whole)
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--sample takes a record count such as 200000 or a size such as 64MiB; got "${text}"`
    )
  return size.unit ? { bytes: size.bytes } : { records: size.bytes }
}

/** --sample with its --sample-windows, checked together; undefined without --sample. */
export function parseSampleFlags(values: {
  sample?: string | undefined
  'sample-windows'?: string | undefined
}): (SampleBudget & { readonly windows?: number }) | undefined {
  const windows = parseInteger(values['sample-windows'], 'sample-windows', 1, 10_000)
  if (values.sample === undefined) {
    if (windows !== undefined) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--sample-windows needs --sample')
    return undefined
  }
  return { ...parseSampleBudget(values.sample), ...(windows === undefined ? {} : { windows }) }
}

function distinct(flag: string, values: number[]): number[] {
  if (new Set(values).size !== values.length)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--${flag} names the same value twice`)
  return values
}
