import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The shared real-log corpus lives outside the repo (never copied in). CI puts `shared/` beside
 * the clone; SQUEEZE_CORPUS_DIR overrides. Resolved from the repo root whether this runs from
 * test/helpers (ts) or dist/test/helpers (compiled).
 */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the repository root (no package.json above the test helpers)')
    dir = parent
  }
  return dir
}

export function corpusDir(): string {
  const fromEnv = process.env.SQUEEZE_CORPUS_DIR
  return fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : resolve(repoRoot(), '..', 'shared', 'corpus')
}

export function corpusPath(name: string): string {
  const path = join(corpusDir(), name)
  if (!existsSync(path)) throw new Error(`corpus file ${name} not found in ${corpusDir()} (set SQUEEZE_CORPUS_DIR)`)
  return path
}

/** Lines of a corpus file, without the empty string after the final newline. */
export function corpusLines(name: string): string[] {
  const lines = readFileSync(corpusPath(name), 'utf8').split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

export const CORPUS_FILES = {
  http: 'access_apache_semicomplete_2015.log',
  journald: 'journald_fedora37_rpi4_system.json',
  'nginx-error': 'nginx_error_techcreation_2011.log',
  'dns-dnsmasq': 'dns_dnsmasq_hotspot_2025.log',
  'dns-zeek': 'dns_zeek_wrccdc2018_first8000.log',
  syslog: 'syslog_ubuntu_touch_2015.log'
} as const
