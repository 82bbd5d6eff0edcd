import { readFileSync } from 'node:fs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { MonthlyMoney, Prices } from './audit-report.js'

const GIB = 1024 ** 3
/** A calendar month on average: 365.25 / 12 days. */
export const DAYS_PER_MONTH = 365.25 / 12

/** A topic change's figures that prices apply to. */
export interface MoneyFigures {
  readonly steadyStateDiskBytes: number | null
  readonly fetchBytesPerDay: number | null
  readonly cpuSecondsPerDay: number | null
}

/** What a month of a topic's change is worth, from bytes and CPU seconds. */
export function monthlyMoney(prices: Prices, figures: MoneyFigures): MonthlyMoney {
  const storage =
    prices.storageGiBMonth === null || figures.steadyStateDiskBytes === null
      ? null
      : (figures.steadyStateDiskBytes / GIB) * prices.storageGiBMonth
  const transfer =
    prices.transferGiB === null || figures.fetchBytesPerDay === null
      ? null
      : ((figures.fetchBytesPerDay * DAYS_PER_MONTH) / GIB) * prices.transferGiB
  const cpu =
    prices.coreHour === null || figures.cpuSecondsPerDay === null
      ? null
      : ((figures.cpuSecondsPerDay * DAYS_PER_MONTH) / 3600) * prices.coreHour
  const priced = storage !== null || transfer !== null || cpu !== null
  const net = priced ? (storage ?? 0) + (transfer ?? 0) - (cpu ?? 0) : null
  return { storage, transfer, cpu, net }
}

/** Adds topics' monthly money field by field; a field is null only when no topic has it. */
export function sumMoney(items: readonly MonthlyMoney[]): MonthlyMoney {
  const add = (key: keyof MonthlyMoney): number | null => {
    const known = items.map((m) => m[key]).filter((v): v is number => v !== null)
    return known.length === 0 ? null : known.reduce((a, b) => a + b, 0)
  }
  return { storage: add('storage'), transfer: add('transfer'), cpu: add('cpu'), net: add('net') }
}

export interface PriceFlags {
  readonly storageGiBMonth?: number | undefined
  readonly transferGiB?: number | undefined
  readonly coreHour?: number | undefined
  readonly file?: string | undefined
}

/**
 * Prices from the flags, else from --prices FILE: a JSON object with storageGiBMonth, transferGiB, coreHour
 * (numbers, any may be absent), currency, source and date (where the figures come from). Flags override the
 * file field by field; null when no price is given at all.
 */
export function pricesFrom(flags: PriceFlags): Prices | null {
  const file = flags.file === undefined ? {} : readPricesFile(flags.file)
  const pick = (flag: number | undefined, key: 'storageGiBMonth' | 'transferGiB' | 'coreHour'): number | null =>
    flag ?? file[key] ?? null
  const prices = {
    storageGiBMonth: pick(flags.storageGiBMonth, 'storageGiBMonth'),
    transferGiB: pick(flags.transferGiB, 'transferGiB'),
    coreHour: pick(flags.coreHour, 'coreHour'),
    currency: file.currency ?? 'USD',
    source: file.source === undefined ? null : `${file.source}${file.date === undefined ? '' : `, ${file.date}`}`
  }
  return prices.storageGiBMonth === null && prices.transferGiB === null && prices.coreHour === null ? null : prices
}

interface PricesFile {
  storageGiBMonth?: number
  transferGiB?: number
  coreHour?: number
  currency?: string
  source?: string
  date?: string
}

const FILE_KEYS: Readonly<Record<keyof PricesFile, 'number' | 'string'>> = {
  storageGiBMonth: 'number',
  transferGiB: 'number',
  coreHour: 'number',
  currency: 'string',
  source: 'string',
  date: 'string'
}

function readPricesFile(path: string): PricesFile {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--prices ${path}: not a readable JSON file (${errorMessage(err)})`
    )
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--prices ${path}: expected a JSON object`)
  const problems: string[] = []
  for (const [key, value] of Object.entries(parsed)) {
    const type = FILE_KEYS[key as keyof PricesFile]
    if (type === undefined) problems.push(`unknown key "${key}" (known: ${Object.keys(FILE_KEYS).join(', ')})`)
    else if (typeof value !== type || (type === 'number' && !(Number.isFinite(value) && (value as number) >= 0)))
      problems.push(`${key} must be a ${type === 'number' ? 'number >= 0' : 'string'}`)
  }
  if (problems.length > 0) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--prices ${path}: ${problems.join('; ')}`)
  return parsed as PricesFile
}
