import { formatCodecSpec, parseCodecSpec, type CodecSpec } from '../codecs/index.js'
import type { CompareTargetResult, Recommendation } from '../compare/compare-report.js'
import { canExpress, CLIENT_LIMITS, nearestExpressible, type ClientName } from './client-limits.js'

/**
 * The recommendation's rule over some rows: `recommend(rows, options)` with the run's options bound (the audit's
 * adds its margin over today's codec).
 */
export type PickRule = (rows: readonly CompareTargetResult[]) => Pick<Recommendation, 'target'> | null

/** One client's best target: what it can set, and what its limit costs against the overall pick. */
export interface ClientTarget {
  readonly client: ClientName
  /** The target this client can write, picked by the same rule; null when it can write none of the measured ones. */
  readonly target: string | null
  /** The chosen row's measured figures, from the same run as every other row. */
  readonly ratio: number | null
  readonly compressCpuSecondsPerGiB: number | null
  readonly storedBytes: number | null
  /** The pick over every row, whatever the client can set; null when nothing was recommended. */
  readonly overall: string | null
  /** True when the client cannot set the overall pick. */
  readonly limited: boolean
  /** This client's stored bytes / the overall pick's: above 1, what its limit costs in bytes. */
  readonly storedShareOfOverall: number | null
  /** The figures in one sentence: which target the client cannot set, what it sets instead, and its stored bytes. */
  readonly text: string
}

/**
 * Per client, the best target that client can express: the overall pick when it can set it, else `rule` (the
 * recommendation's own rule) over the rows it can write, and what that costs against the overall pick. Pure: the
 * audit calls it with
 * its own rows and rule.
 */
export function bestTargetPerClient(
  rows: readonly CompareTargetResult[],
  clients: readonly ClientName[],
  rule: PickRule
): ClientTarget[] {
  const overall = rule(rows)
  const overallRow = overall === null ? undefined : rows.find((r) => r.target === overall.target)
  return clients.map((client) => {
    const writable = rows.filter((r) => canExpress(client, specOf(r)))
    const limited = overall !== null && !writable.some((r) => r.target === overall.target)
    const row = limited ? limitedPick(client, writable, rule, overallRow) : (overallRow ?? ruleRow(writable, rule))
    const share =
      row === undefined || overallRow === undefined || overallRow.storedBytes <= 0
        ? null
        : row.storedBytes / overallRow.storedBytes
    return {
      client,
      target: row?.target ?? null,
      ratio: row?.ratio ?? null,
      compressCpuSecondsPerGiB: row?.compressCpuSecondsPerGiB ?? null,
      storedBytes: row?.storedBytes ?? null,
      overall: overall?.target ?? null,
      limited,
      storedShareOfOverall: share,
      text: clientTargetText(client, row?.target ?? null, overall?.target ?? null, limited, share, writable.length)
    }
  })
}

/**
 * A client that cannot set the overall pick: the rule over the rows it can write, else (the rule's limit
 * cannot be met within them) the row nearest the overall pick, so the cost of the limit is still shown.
 */
function limitedPick(
  client: ClientName,
  writable: readonly CompareTargetResult[],
  rule: PickRule,
  overallRow: CompareTargetResult | undefined
): CompareTargetResult | undefined {
  const picked = ruleRow(writable, rule)
  if (picked !== undefined || overallRow === undefined) return picked
  const nearest = nearestExpressible(client, specOf(overallRow))
  return nearest === null ? undefined : writable.find((r) => r.target === formatCodecSpec(nearest))
}

function ruleRow(rows: readonly CompareTargetResult[], rule: PickRule): CompareTargetResult | undefined {
  if (rows.length === 0) return undefined
  const pick = rule(rows)
  return pick === null ? undefined : rows.find((r) => r.target === pick.target)
}

/** A row's codec and level as its target names them. */
export function specOf(row: Pick<CompareTargetResult, 'target'>): CodecSpec {
  return parseCodecSpec(row.target)
}

function clientTargetText(
  client: ClientName,
  target: string | null,
  overall: string | null,
  limited: boolean,
  share: number | null,
  writable: number
): string {
  if (target === null && writable > 0)
    return `${client}: none of the ${writable} targets it can write meets the recommendation's limit`
  if (target === null) return `${client} can write none of the measured targets (${describeCodecs(client)})`
  if (overall === null) return `${client}: ${target}`
  if (!limited) return `${client}: ${target}, as recommended`
  const cost = share === null ? '' : `; ${target} stores ${share.toFixed(2)}x of it`
  return `${client} cannot set ${overall}${cost}`
}

function describeCodecs(client: ClientName): string {
  return `it writes ${Object.keys(CLIENT_LIMITS[client].codecs).join(', ')}`
}
