/**
 * Keeps V8's compiled code of every module squeeze loads (its own, kafkajs, pino, prom-client, zod) between runs
 * (`module.enableCompileCache`), so a run after the first skips most of their compilation: Node's start-up and
 * module loading were a quarter of a short `produce`'s CPU.
 *
 * The cache is an optimisation, never a reason to fail: where no directory can be written (the image runs with a
 * read-only root filesystem as uid 1000) squeeze runs without it, silently. NODE_COMPILE_CACHE (a directory of the
 * user's choice, which Node enables before any code runs) and NODE_DISABLE_COMPILE_CACHE keep their meaning.
 *
 * Built-ins come through process.getBuiltinModule: an ESM import of node:fs builds its namespace, which loads
 * fs streams this entry point does not need.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const nodeModule = process.getBuiltinModule('node:module')
  const existing = nodeModule.getCompileCacheDir()
  if (existing !== undefined) return existing
  if (env['NODE_DISABLE_COMPILE_CACHE'] !== undefined) return undefined
  for (const dir of cacheDirs(env)) {
    if (!ownWritableDir(dir)) continue
    const { status } = nodeModule.enableCompileCache(dir)
    if (
      status === nodeModule.constants.compileCacheStatus.ENABLED ||
      status === nodeModule.constants.compileCacheStatus.ALREADY_ENABLED
    )
      return dir
  }
  return undefined
}

/** Writes what was compiled so far, so a process that is later killed still leaves its cache for the next run. */
export function flushCompileCache(): void {
  process.getBuiltinModule('node:module').flushCompileCache()
}

/** The user's cache directory (XDG), then a per-user directory in the temporary folder. */
function cacheDirs(env: NodeJS.ProcessEnv): string[] {
  const { isAbsolute, join } = process.getBuiltinModule('node:path')
  const os = process.getBuiltinModule('node:os')
  const dirs: string[] = []
  // The XDG spec ignores a relative XDG_CACHE_HOME.
  const xdg = env['XDG_CACHE_HOME']
  const home = safely(() => os.homedir())
  const userCache =
    xdg !== undefined && isAbsolute(xdg) ? xdg : home === undefined || home === '' ? undefined : join(home, '.cache')
  if (userCache !== undefined) dirs.push(join(userCache, 'squeeze', 'compile-cache'))
  dirs.push(join(os.tmpdir(), `squeeze-compile-cache-${process.getuid?.() ?? 'user'}`))
  return dirs
}

/**
 * Creates `dir` a level at a time (Node's recursive mkdir loops forever where mkdir answers ENOENT under an existing
 * parent, as in /proc), then checks that it is a directory this user owns and may write: a directory someone else
 * created in a shared /tmp could hand this process code to run.
 */
function ownWritableDir(dir: string): boolean {
  const fs = process.getBuiltinModule('node:fs')
  const { dirname } = process.getBuiltinModule('node:path')
  const missing: string[] = []
  for (let d = dir; !fs.existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d)
  for (const d of missing) {
    try {
      fs.mkdirSync(d, { mode: 0o700 })
    } catch {
      // Another process may have made it meanwhile.
      if (!fs.existsSync(d)) return false
    }
  }
  const stats = safely(() => fs.statSync(dir))
  if (stats === undefined || !stats.isDirectory()) return false
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) return false
  return (
    safely(() => {
      fs.accessSync(dir, fs.constants.W_OK)
      return true
    }) ?? false
  )
}

function safely<T>(f: () => T): T | undefined {
  try {
    return f()
  } catch {
    return undefined
  }
}
