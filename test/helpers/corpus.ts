import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LogKind } from '../../lib/formats/index.js'
import { repoRoot } from './repo-root.js'

/**
 * Real logs the tests read, shipped in test/fixtures/corpus/ (licenses and sha256 in its PROVENANCE.md), so a
 * fresh clone needs nothing beside it. Resolved from the repo root whether this runs from test/helpers (ts) or
 * dist/test/helpers (compiled).
 */

export function corpusDir(): string {
  return join(repoRoot(), 'test', 'fixtures', 'corpus')
}

export function corpusPath(name: string): string {
  const path = join(corpusDir(), name)
  if (!existsSync(path)) throw new Error(`corpus fixture ${name} not found in ${corpusDir()}`)
  return path
}

/** Lines of a corpus file, without the empty string after the final newline. */
export function corpusLines(name: string): string[] {
  const lines = readFileSync(corpusPath(name), 'utf8').split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** Every fixture and the kind it is a log of; dnsmasq has two, the plain and the Pi-hole `log-queries=extra` variant. */
export const CORPUS_FIXTURES: ReadonlyArray<{ readonly file: string; readonly kind: LogKind }> = [
  { file: 'access_apache_semicomplete_2015.log', kind: 'http' },
  { file: 'journald_fedora37_rpi4_system.json', kind: 'journald' },
  { file: 'nginx_error_chemfh_2023.log', kind: 'nginx-error' },
  { file: 'dns_dnsmasq_iodine_lab_2020.log', kind: 'dns-dnsmasq' },
  { file: 'dns_pihole_extra_fixture.log', kind: 'dns-dnsmasq' },
  { file: 'dns_zeek_wrccdc2018_first8000.log', kind: 'dns-zeek' },
  { file: 'syslog_mtail_sftp_chroot.log', kind: 'syslog' }
]

/** The lines of every fixture of `kind`, file after file in CORPUS_FIXTURES order. */
export function kindLines(kind: LogKind): string[] {
  return CORPUS_FIXTURES.filter((f) => f.kind === kind).flatMap((f) => corpusLines(f.file))
}
