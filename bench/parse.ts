import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { formatFor, type LogKind } from '../lib/formats/index.js'
import { createGenerator } from '../lib/generators/index.js'

/**
 * Lines/s of each format's encodeLine on its corpus file (parse, and for http the Cap'n Proto encode), one core
 * (lines per CPU second of this process), best of 5 passes after a warm-up pass; and the generator's records/s. Lines a format rejects count as read
 * (they were parsed too). Run: npm run build && node dist/bench/parse.js [out.json]. A benchmark, not a test.
 */
export const FIXTURES: ReadonlyArray<{ readonly kind: LogKind; readonly file: string }> = [
  { kind: 'http', file: 'access_apache_semicomplete_2015.log' },
  { kind: 'journald', file: 'journald_fedora37_rpi4_system.json' },
  { kind: 'nginx-error', file: 'nginx_error_chemfh_2023.log' },
  { kind: 'dns-dnsmasq', file: 'dns_dnsmasq_iodine_lab_2020.log' },
  { kind: 'dns-zeek', file: 'dns_zeek_wrccdc2018_first8000.log' },
  { kind: 'syslog', file: 'syslog_mtail_sftp_chroot.log' }
]
export const CORPUS_DIR = new URL('../../test/fixtures/corpus/', import.meta.url)
/** Lines per timed pass: small files are replayed so every pass runs long enough to time. */
const PASS_LINES = 100_000

/** CPU seconds of this process since `from` (process.cpuUsage()): on a shared machine, wall time measures the neighbours. */
function cpuSecondsSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from)
  return (used.user + used.system) / 1e6
}

export function linesPerSecond(kind: LogKind, file: string): number {
  const lines = readFileSync(new URL(file, CORPUS_DIR), 'utf8').split('\n').filter((l) => l !== '')
  const format = formatFor(kind)
  let best = 0
  for (let pass = 0; pass < 6; pass++) {
    let bytes = 0
    const t0 = process.cpuUsage()
    for (let i = 0; i < PASS_LINES; i++) {
      try {
        bytes += format.encodeLine(lines[i % lines.length] as string).length
      } catch {
        bytes++
      }
    }
    const seconds = cpuSecondsSince(t0)
    assert.ok(bytes > 0)
    if (pass > 0) best = Math.max(best, PASS_LINES / seconds)
  }
  return Math.round(best)
}

export function generatorRecordsPerSecond(kind: LogKind): number {
  const gen = createGenerator(kind, { seed: 1 })
  let best = 0
  for (let pass = 0; pass < 6; pass++) {
    let bytes = 0
    const t0 = process.cpuUsage()
    for (let i = 0; i < PASS_LINES; i++) bytes += gen.next().value.length
    const seconds = cpuSecondsSince(t0)
    assert.ok(bytes > 0)
    if (pass > 0) best = Math.max(best, PASS_LINES / seconds)
  }
  return Math.round(best)
}

function main(): void {
  const parse = Object.fromEntries(FIXTURES.map(({ kind, file }) => [kind, linesPerSecond(kind, file)]))
  const generator = { http: generatorRecordsPerSecond('http') }
  console.log('encodeLine on the corpus files, lines per CPU second (best of 5 passes):')
  console.table(parse)
  console.log('generator records per CPU second:')
  console.table(generator)
  writeFileSync(process.argv[2] ?? 'bench-parse.json', JSON.stringify({ linesPerSecond: parse, generatorRecordsPerSecond: generator }, null, 2))
}

if (import.meta.url === `file://${process.argv[1]}`) main()
