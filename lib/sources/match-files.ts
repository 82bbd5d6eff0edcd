import { glob, lstat, readdir } from 'node:fs/promises'
import { basename, dirname, join, normalize } from 'node:path'

/** Characters that make a path segment a pattern for fs.glob (minimatch). */
const MAGIC = /[*?[\]{}()!+@\\]/
/** What the folder listing below matches by itself: `*` and `?`; any other magic goes to fs.glob. */
const OTHER_MAGIC = /[[\]{}()!+@\\]/

/** Whether `path` holds glob magic, rather than naming one file. */
export function isPattern(path: string): boolean {
  return MAGIC.test(path)
}

/**
 * The paths `pattern` matches now, as fs.glob lists them. A plain path and a pattern with `*` or `?` only in its
 * last segment (`/var/log/nginx/*.log`) are answered by a stat or one folder listing: Node's glob module, whose
 * first load costs a short run's start-up about 10 ms of CPU, and each of whose calls costs a followed set's poll
 * a few more, loads only for other patterns.
 */
export async function* matchPaths(pattern: string): AsyncGenerator<string> {
  const name = basename(pattern)
  const dir = dirname(pattern)
  const plain = name !== '' && name !== '.' && name !== '..' && !pattern.endsWith('/')
  if (!plain || MAGIC.test(dir) || OTHER_MAGIC.test(name)) {
    yield* glob(pattern)
    return
  }
  if (!MAGIC.test(name)) {
    const path = normalize(pattern)
    const exists = await lstat(path).then(
      () => true,
      () => false
    )
    if (exists) yield path
    return
  }
  const matches = segmentMatcher(name)
  const names = await readdir(dir).catch(() => [] as string[])
  for (const entry of names.sort()) if (matches(entry)) yield join(dir, entry)
}

/** `*` any characters, `?` one; as minimatch, neither matches a leading dot unless the pattern starts with one. */
function segmentMatcher(segment: string): (name: string) => boolean {
  const source = [...segment]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.^$|+()[\]{}\\/]/g, '\\$&')))
    .join('')
  const regex = new RegExp(`^${source}$`, 's')
  const dot = segment.startsWith('.')
  return (name) => (dot || !name.startsWith('.')) && regex.test(name)
}
