import { ErrorCodes, SqueezeError } from '../errors.js'

/** Characters of a regex or glob, which no topic name holds (dots aside, which match themselves too). */
const PATTERN = /[*?[\]()|+^$\\{}]/
const SHOWN = 3

/** How the error names the topic and its cluster, and whether the command takes a list of topics. */
export interface MissingTopicsWording {
  /** The cluster, by its brokers (default "the cluster"). */
  readonly where?: string
  /** The topic's part in the command (default "topic"; "source topic"). */
  readonly role?: string
  /** The command takes several topics, comma-separated. */
  readonly list?: boolean
}

/**
 * The topics the cluster does not have, as one error naming them all, with what was likely meant: the topics a
 * name written as a pattern matches (matched whole, as a regex), else the existing names nearest a misspelt one.
 * None when every topic exists.
 */
export function missingTopicsError(
  existing: readonly string[],
  wanted: readonly string[],
  wording: MissingTopicsWording = {}
): SqueezeError | undefined {
  const { where = 'the cluster', role = 'topic', list = false } = wording
  const have = new Set(existing)
  const missing = wanted.filter((t) => !have.has(t))
  if (missing.length === 0) return undefined
  const hints = missing.map((name) => hintFor(name, existing, list)).filter((h) => h !== null)
  return new SqueezeError(
    ErrorCodes.SOURCE,
    `${role}${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not found on ${where}` +
      (hints.length === 0 ? '' : `; ${hints.join('; ')}`)
  )
}

/** Whether `name` holds a regex's or a glob's characters: written as a pattern rather than a topic's name. */
export function isTopicPattern(name: string): boolean {
  return PATTERN.test(name)
}

/** `did you mean ...?` with the existing names nearest `name` (nearestTopics), or null when none is near. */
export function didYouMean(name: string, existing: readonly string[]): string | null {
  const near = nearestTopics(name, existing)
  return near.length === 0 ? null : `did you mean ${near.join(' or ')}?`
}

function hintFor(name: string, existing: readonly string[], list: boolean): string | null {
  if (isTopicPattern(name)) {
    const matched = matchesOf(name, existing)
    const matches = matched.length === 0 ? 'none' : listed(matched)
    return (
      `a topic is named, not matched by a pattern (${name} as a regex matches ${matches})` +
      (list ? '; list topics with commas' : '')
    )
  }
  return didYouMean(name, existing)
}

function matchesOf(pattern: string, existing: readonly string[]): string[] {
  let regex: RegExp
  try {
    regex = new RegExp(`^(?:${pattern})$`)
  } catch {
    return []
  }
  return existing.filter((t) => regex.test(t)).sort()
}

function listed(names: readonly string[]): string {
  const shown = names.slice(0, SHOWN).join(', ')
  return names.length > SHOWN ? `${names.length} topics: ${shown}, ...` : shown
}

/**
 * The existing names within a few edits of `name` (a typo, a dropped or doubled letter), nearest first: at most
 * SHOWN, and only near enough to be the same name misspelt (a third of its characters changed at most).
 */
export function nearestTopics(name: string, existing: readonly string[]): string[] {
  const limit = Math.max(2, Math.floor(name.length / 6))
  return existing
    .map((t) => ({ t, d: Math.abs(t.length - name.length) > limit ? limit + 1 : editDistance(name, t, limit) }))
    .filter(({ d }) => d <= limit && d * 3 <= name.length)
    .sort((a, b) => a.d - b.d || a.t.localeCompare(b.t))
    .slice(0, SHOWN)
    .map(({ t }) => t)
}

/** Levenshtein distance of `a` and `b`, or more than `limit` once every path exceeds it. */
function editDistance(a: string, b: string, limit: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const value = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
      row.push(value)
      best = Math.min(best, value)
    }
    if (best > limit) return limit + 1
    previous = row
  }
  return previous[b.length] ?? 0
}
