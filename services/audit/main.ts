import { squeezeVersion } from '../../lib/service/version.js'
import { writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { pathToFileURL } from 'node:url'
import { CLIENT_NAMES, parseClients, targetsNeededFor } from '../../lib/apply/client-limits.js'
import { pricesFrom } from '../../lib/audit/money.js'
import { AuditProgress } from '../../lib/audit/progress.js'
import { runAudit } from '../../lib/audit/run-audit.js'
import { formatCodecSpec } from '../../lib/codecs/index.js'
import { Progress } from '../../lib/progress/progress.js'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { parseSampleBudget } from '../../lib/compare/projection/sweep-flags.js'
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  connectionFrom,
  parseCommandLine,
  parseInteger,
  serviceOptionsFrom
} from '../../lib/config/cli.js'
import { parseProperties, producerConfigFrom } from '../../lib/config/producer-properties.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../lib/copier/copier.js'
import { DEFAULT_TARGETS, parseTargets } from '../../lib/copier/targets.js'
import { ErrorCodes, SqueezeError } from '../../lib/errors.js'
import { renderAuditMarkdown } from '../../lib/report/audit-markdown.js'
import { renderAuditSvg } from '../../lib/report/audit-svg.js'
import { renderAuditSettings } from '../../lib/report/audit-apply.js'
import { renderAuditTable } from '../../lib/report/audit-table.js'
import { terminalLayout } from '../../lib/report/terminal.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { runOneShot } from '../../lib/service/run-service.js'

/** The report does not cover every topic asked for: one failed, was not readable, was cut or not reached. */
export const EXIT_PARTIAL = 5

/** --show-settings prints the blocks of this many top-ranked changed topics; the files have every topic's. */
const SETTINGS_TOPICS = 3

export const AUDIT_HELP = `squeeze audit: every topic of a cluster in one read-only pass (Describe, DescribeConfigs and
Read; it creates nothing): today's codec mix, each target's ratio with its 95% interval, the verdict (keep, or the codec
to change to), and what the change saves per day on disk and in fetches, ranked.

Usage: squeeze audit --brokers HOST:PORT [options]

Selection and budget:
  --topics REGEX             topics to audit, matched whole (default: every topic but Kafka's internal __*)
  --exclude REGEX            topics to leave out, matched whole
  --sample SIZE              record bytes read per topic, as windows over every partition (default 16MiB)
  --max-duration D           end the pass after D (600, 90s, 10m, 1h): topics in flight are cut where they stand,
                             topics not started are skipped (not reached); both leave the report partial
  --targets LIST             codec[:level] list (default ${DEFAULT_TARGETS.join(',')})
  --threads N                projection threads, and topics sampled at once (default: the machine's cores)
  --consumers N              count N groups per topic for fetch savings instead of the groups found
  --replication-factor N     count N replicas per topic for disk savings instead of each topic's own
  -X NAME=VALUE              producer batching the targets are projected with (linger.ms, batch.size)
Clients (docs/clients.md):
  --client LIST              per changed topic, the best target each client can set, by the verdict's rule (default
                             all): ${CLIENT_NAMES.join(', ')};
                             targets a client needs are added (zstd:12 beside zstd:19 for librdkafka)
  --show-settings            print the settings to paste for the top ${SETTINGS_TOPICS} changed topics
                             (every changed topic's are in --json applyAs and --markdown)
Money (optional; without prices, bytes and CPU-hours only):
  --price-storage-gib-month P  --price-transfer-gib P  --price-core-hour P
  --prices FILE              JSON {storageGiBMonth, transferGiB, coreHour, currency, source, date}; flags override it
Output:
  --json FILE  --markdown FILE  --chart FILE.svg (the top 20 savings)
  --wide                     full topic names, no wrapping (default: fit the terminal, else COLUMNS, else 100
                             columns)
  --quiet                    no progress on stderr
  --progress-every S         seconds between JSON progress lines when stderr is not a terminal (default 10)
${CONNECTION_HELP}

Exit codes: 0 every topic audited; 1 runtime failure; 2 invalid arguments; 3 credentials refused; 4 TLS handshake
failed; ${EXIT_PARTIAL} partial report (a topic failed or was not readable, or --max-duration cut or skipped
topics).`

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  topics: { type: 'string' },
  exclude: { type: 'string' },
  sample: { type: 'string' },
  'max-duration': { type: 'string' },
  targets: { type: 'string' },
  threads: { type: 'string' },
  consumers: { type: 'string' },
  'replication-factor': { type: 'string' },
  X: { type: 'string', short: 'X', multiple: true },
  'price-storage-gib-month': { type: 'string' },
  'price-transfer-gib': { type: 'string' },
  'price-core-hour': { type: 'string' },
  prices: { type: 'string' },
  json: { type: 'string' },
  markdown: { type: 'string' },
  chart: { type: 'string' },
  quiet: { type: 'boolean' },
  wide: { type: 'boolean' },
  client: { type: 'string' },
  'show-settings': { type: 'boolean' },
  'progress-every': { type: 'string' }
} as const

const DEFAULT_SAMPLE = '16MiB'
const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/
const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 }

function durationMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const match = DURATION.exec(value)
  const ms = match === null ? Number.NaN : Number(match[1]) * (DURATION_UNITS[match[2] ?? 's'] as number)
  if (!(ms > 0))
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--max-duration takes a duration such as 600, 90s, 10m or 1h; got "${value}"`
    )
  return ms
}

function pattern(value: string | undefined, flag: string): RegExp | null {
  if (value === undefined) return null
  try {
    return new RegExp(`^(?:${value})$`)
  } catch (err) {
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--${flag} is not a regular expression: ${(err as Error).message}`
    )
  }
}

function price(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--${flag} must be a number >= 0, got "${value}"`)
  return n
}

export async function auditMain(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  installKafkajsDecoders()
  const flags = parseCommandLine(argv, OPTIONS, AUDIT_HELP)
  if (flags === undefined) return 0
  const { values } = flags
  return runOneShot({
    name: 'squeeze-audit',
    service: serviceOptionsFrom({ ...values, 'log-level': values['log-level'] ?? 'warn' }),
    configure: (log) => {
      const brokers = values.brokers ?? (env.KAFKA_BROKERS === '' ? undefined : env.KAFKA_BROKERS)
      if (brokers === undefined)
        throw new SqueezeError(
          ErrorCodes.CONFIG_INVALID,
          'missing --brokers: the audit reads an existing cluster (or set KAFKA_BROKERS)'
        )
      const sample = parseSampleBudget(values.sample ?? DEFAULT_SAMPLE)
      if (!('bytes' in sample))
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `--sample takes a size such as 16MiB; got "${values.sample}"`)
      const named = values.targets ?? DEFAULT_TARGETS.join(',')
      const clients = parseClients(values.client)
      const added = targetsNeededFor(
        parseTargets(named, 'audit').map((t) => t.spec),
        clients
      ).map(formatCodecSpec)
      const targets = [named, ...added].join(',')
      const producer = producerConfigFrom(parseProperties(values.X ?? []), undefined, COPIER_PRODUCER_DEFAULTS)
      return Object.freeze({
        connection: connectionFrom({ ...values, brokers }, env, log),
        selection: { topics: pattern(values.topics, 'topics'), exclude: pattern(values.exclude, 'exclude') },
        targets,
        added,
        clients,
        sampleBytes: sample.bytes,
        threads: parseInteger(values.threads, 'threads', 1, 1024) ?? availableParallelism(),
        maxDurationMs: durationMs(values['max-duration']),
        batching: { lingerMs: producer.lingerMs, batchSizeBytes: producer.batchSizeBytes },
        consumersOverride: parseInteger(values.consumers, 'consumers', 0, 10_000),
        replicationFactorOverride: parseInteger(values['replication-factor'], 'replication-factor', 1, 32_767),
        prices: pricesFrom({
          storageGiBMonth: price(values['price-storage-gib-month'], 'price-storage-gib-month'),
          transferGiB: price(values['price-transfer-gib'], 'price-transfer-gib'),
          coreHour: price(values['price-core-hour'], 'price-core-hour'),
          file: values.prices
        }),
        progressEverySeconds: parseInteger(values['progress-every'], 'progress-every', 1, 86_400) ?? 10,
        shutdownTimeoutMs: 60_000
      })
    },
    start: async ({ log, signal, connect }, settings) => {
      const progress =
        values.quiet === true
          ? undefined
          : new AuditProgress(
              new Progress({
                stream: process.stderr,
                // Progress is the point of a log line here, whatever --log-level keeps of the rest.
                log: log.child({}, { level: 'info' }),
                quiet: false,
                logEveryMs: settings.progressEverySeconds * 1000
              })
            )
      const report = await connect(
        runAudit({ ...settings, version: squeezeVersion(), log, signal, progress }),
        settings.connection
      )
      progress?.end()
      if (settings.added.length > 0)
        process.stdout.write(`added for --client: ${settings.added.join(', ')} (the nearest level a client can set)\n`)
      const layout = terminalLayout(process.stdout, values.wide === true)
      process.stdout.write(`${renderAuditTable(report, layout)}\n`)
      process.stdout.write(renderAuditSettings(report, values['show-settings'] === true, SETTINGS_TOPICS, layout))
      if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`)
      if (values.markdown !== undefined) writeFileSync(values.markdown, renderAuditMarkdown(report))
      if (values.chart !== undefined) writeFileSync(values.chart, renderAuditSvg(report))
      return report.partial ? EXIT_PARTIAL : 0
    }
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runCommand(() => auditMain(process.argv.slice(2)))
