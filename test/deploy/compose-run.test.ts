import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { CompareReport } from '../../lib/compare/compare-report.js'
import { poll, type PollOptions } from '../helpers/poll.js'
import {
  ComposeProject,
  composeConfig,
  composeVersion,
  docker,
  dockerAnswers,
  TEST_OVERRIDE,
  type ComposeServiceConfig
} from './compose-cli.js'
import { dashboardQueries, ROOT } from './manifests.js'

/**
 * docker-compose.yml run by Docker Compose itself (`docker compose up --build`, and with the `replicated` profile),
 * as users run it, with the test override of compose-cli.ts (no host ports, the build on the host's network).
 * Grafana is not started: its image is neither pulled (no registry) nor among scripts/build-images.sh's stand-ins.
 * Needs a Docker engine with the images of scripts/build-images.sh and the plugin of scripts/compose-v2.sh;
 * scripts/test.sh provides all three (as root). Each test sets its own timeout, above the suite's per-test default:
 * the image's build and the brokers' start take minutes on a busy machine.
 */

interface PromSeries {
  metric: Record<string, string>
  value: [number, string]
}

function flag(command: string[] | undefined, name: string): string {
  const i = (command ?? []).indexOf(name)
  const value = i < 0 ? undefined : command?.[i + 1]
  if (value === undefined) throw new Error(`no ${name} in ${(command ?? []).join(' ')}`)
  return value
}

/**
 * As a user sets it before `docker compose up`: the file has no default for the Grafana admin password.
 * DOCKER_BUILDKIT=0: Compose's BuildKit path needs BuildKit in the engine and the Dockerfile's `# syntax=` frontend
 * image from a registry; Debian's engine builds with its own (classic) builder, which needs neither.
 */
const COMPOSE_ENV = { ...process.env, GRAFANA_ADMIN_PASSWORD: randomUUID(), DOCKER_BUILDKIT: '0' }

/** A fresh project of the file with the test override, and the helpers every test of it uses. */
function testProject(suffix: string, profiles: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-compose-'))
  const override = join(dir, 'compose.test-override.yml')
  writeFileSync(override, TEST_OVERRIDE)
  const project = new ComposeProject(`squeeze-it-${randomUUID().slice(0, 8)}${suffix}`, override, COMPOSE_ENV, profiles)
  // Each probe spawns docker or asks Prometheus: once a second is enough.
  const slowly: PollOptions = { intervalMs: 1000, describeState: () => project.logs() }
  let prometheus = ''
  /** GET of Prometheus's HTTP API, parsed. */
  const api = async (path: string): Promise<unknown> => {
    if (prometheus === '') prometheus = await project.address('prometheus')
    const res = await fetch(`http://${prometheus}:9090${path}`, { signal: AbortSignal.timeout(10_000) })
    return res.json()
  }
  const query = async (promql: string): Promise<PromSeries[]> => {
    const body = (await api(`/api/v1/query?query=${encodeURIComponent(promql)}`)) as {
      status: string
      error?: string
      data?: { result: PromSeries[] }
    }
    if (body.status !== 'success' || body.data === undefined) throw new Error(`${promql}: ${body.error ?? 'failed'}`)
    return body.data.result
  }
  // Prometheus answers only once its container is up and has scraped: until then a poll sees no series.
  const queryOrNone = (promql: string): Promise<PromSeries[]> => query(promql).catch(() => [])
  const healthOf = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await project.containers()).map((c) => [c.Service, c.Health === '' ? `${c.State} ${c.ExitCode}` : c.Health])
    )
  /** Lets the producer write at least `records`, then stops it; it exits 0 once it flushed what it accepted. */
  const produceBacklog = async (records: number): Promise<void> => {
    await poll(
      `the producer to be scraped with ${records} records produced`,
      () => queryOrNone(`sum(squeeze_records_produced_total{job="squeeze-producer"})`),
      (r) => Number(r[0]?.value[1] ?? 0) >= records,
      120_000,
      slowly
    )
    // `stop` gives the producer the file's stop_grace_period to flush what it accepted.
    await project.compose(['stop', 'producer'], 180_000)
    assert.equal((await project.container('producer')).ExitCode, 0, await project.logs())
  }
  const cleanUp = async (): Promise<void> => {
    await project.down().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
  return { project, dir, slowly, api, query, queryOrNone, healthOf, produceBacklog, cleanUp }
}

/** Polls until Prometheus's latest scrapes count `records` on every codec topic, copied and then consumed. */
async function waitForEveryCopyRead(
  queryOrNone: (promql: string) => Promise<PromSeries[]>,
  topics: number,
  records: number,
  options: PollOptions
): Promise<void> {
  const whole = (counts: PromSeries[]): boolean =>
    counts.length === topics && counts.every((c) => Number(c.value[1]) === records)
  await poll(
    `the copier to have copied all ${records} source records into each of the ${topics} codec topics`,
    () => queryOrNone(`sum by (topic) (squeeze_records_produced_total{job="squeeze-copier"})`),
    whole,
    180_000,
    options
  )
  // The consumer follows every codec topic from the earliest offset, so it reads each copy whole, once; Prometheus
  // shows that a scrape or two after the copier's last commit.
  await poll(
    'the consumer to have read every copied record of every codec topic',
    () => queryOrNone(`sum by (topic) (squeeze_records_consumed_total{job="squeeze-consumer"})`),
    whole,
    120_000,
    options
  )
}

describe('docker compose up --build: docker-compose.yml run by Docker Compose itself', () => {
  const { project, dir, slowly, api, query, queryOrNone, healthOf, produceBacklog, cleanUp } = testProject('')
  let services: Record<string, ComposeServiceConfig> = {}

  before(async () => {
    assert.ok(await dockerAnswers(), 'no Docker engine answers (scripts/test.sh starts one when run as root)')
    assert.match(await composeVersion(), /^v?2\./)
    services = (await composeConfig(COMPOSE_ENV)).services
  })
  after(cleanUp)

  it(
    'builds the image (non-root, native codecs load) and starts Kafka, Prometheus and the producer healthy',
    { timeout: 1_500_000 },
    async () => {
      // --wait: Compose returns once every started service passes its healthcheck, and fails if one does not.
      await project.compose(
        ['up', '--build', '--detach', '--wait', '--wait-timeout', '600', 'kafka-1', 'prometheus', 'producer'],
        1_200_000
      )
      assert.deepEqual(await healthOf(), { 'kafka-1': 'healthy', prometheus: 'healthy', producer: 'healthy' })
      const image = services.producer?.image ?? ''
      assert.equal(await docker(['image', 'inspect', '--format', '{{.Config.User}}', image]), '1000:1000')
      const loaded = await docker([
        'run',
        '--rm',
        '--read-only',
        '--network',
        'none',
        '--entrypoint',
        'node',
        image,
        '-e',
        "for (const m of ['squeeze-lz4', 'zstd-napi', 'snappy']) require(m); process.stdout.write(process.getuid() + ' ' + process.version)"
      ])
      assert.match(loaded, /^1000 v\d+\./)
    }
  )

  it(
    'producer → copier → consumer; Prometheus scrapes all three; its stored ratio per codec topic matches squeeze compare',
    { timeout: 1_200_000 },
    async () => {
      // A fixed backlog first, so the copier and compare batch the same records the same way.
      await produceBacklog(10_000)

      // --no-deps: the copier's depends_on would start the producer again and grow the backlog.
      await project.compose(
        ['up', '--detach', '--wait', '--wait-timeout', '300', '--no-deps', 'copier', 'consumer'],
        400_000
      )
      assert.deepEqual(await healthOf(), {
        'kafka-1': 'healthy',
        prometheus: 'healthy',
        producer: 'exited 0',
        copier: 'healthy',
        consumer: 'healthy'
      })

      const copy = services.copier?.command
      chmodSync(dir, 0o777)
      await project.compose(
        [
          'run',
          '--rm',
          '--no-deps',
          '-T',
          '--volume',
          `${dir}:/out`,
          'producer',
          'compare',
          '--topic',
          flag(copy, '--topic'),
          '--brokers',
          services.copier?.environment?.['KAFKA_BROKERS'] ?? '',
          '--targets',
          flag(copy, '--targets'),
          '--destination',
          'compare.{source}.{target}',
          '--json',
          '/out/compare.json',
          '--log-level',
          'warn'
        ],
        600_000
      )
      const report = JSON.parse(readFileSync(join(dir, 'compare.json'), 'utf8')) as CompareReport
      assert.ok(report.source.records >= 10_000, `compare read the whole backlog (${report.source.records} records)`)

      // Every copy holds the whole backlog in Prometheus's latest scrape of the copier; then the ratios are final.
      await waitForEveryCopyRead(queryOrNone, report.targets.length, report.source.records, slowly)
      const ratios = await query(
        `sum by (topic) (squeeze_produced_uncompressed_bytes_total{job="squeeze-copier"}) / sum by (topic) (squeeze_produced_compressed_bytes_total{job="squeeze-copier"})`
      )
      for (const target of report.targets) {
        const topic = target.topic.replace(/^compare\./, '')
        const series = ratios.find((r) => r.metric['topic'] === topic)
        assert.ok(series !== undefined, `Prometheus has a ratio for ${topic}`)
        const live = Number(series.value[1])
        assert.ok(
          Math.abs(live / target.ratio - 1) <= 0.05,
          `${topic}: Prometheus ${live.toFixed(3)} vs squeeze compare ${target.ratio.toFixed(3)}`
        )
      }
    }
  )

  it(
    'every Grafana dashboard query returns data from that Prometheus while the three services run',
    { timeout: 600_000 },
    async () => {
      // Polled rather than `up --wait`: a healthcheck that misses its retries on a busy machine marks the container
      // unhealthy, and the next check that passes makes it healthy again.
      await project.compose(['up', '--detach', '--no-deps', 'producer'], 300_000)
      await poll(
        'the restarted producer to pass its compose healthcheck',
        async () => (await project.container('producer')).Health,
        (health) => health === 'healthy',
        300_000,
        slowly
      )
      const up = await poll(
        'producer, copier and consumer up in Prometheus',
        () => queryOrNone('up{job=~"squeeze-.*"} == 1'),
        (r) => r.length === 3,
        60_000,
        slowly
      )
      assert.deepEqual(up.map((r) => r.metric['service']).sort(), ['consumer', 'copier', 'producer'])

      const source = dashboardSource()
      // Grafana's $__rate_interval is four scrape intervals (5 s in deploy/prometheus/prometheus.yml).
      const grafana = (expr: string): string =>
        expr.replaceAll('$source', source).replaceAll('$__rate_interval', '20s').replaceAll('$__range', '15m')
      const empty = async (): Promise<string[]> => {
        const problems: string[] = []
        for (const { panel, expr } of dashboardQueries()) {
          if ((await query(grafana(expr))).length > 0) continue
          // A labelled counter has no series until it first counts (the error counters of a healthy run): the
          // query is still right when every metric it names is one Prometheus scraped a declaration of.
          let declared = true
          let someWithoutSeries = false
          for (const name of new Set([...expr.matchAll(/\bsqueeze_[a-z0-9_]+/g)].map((m) => m[0]))) {
            const family = name.replace(/_(bucket|sum|count)$/, '')
            const meta = (await api(`/api/v1/metadata?metric=${family}`)) as { data: Record<string, unknown[]> }
            declared &&= meta.data[family] !== undefined
            someWithoutSeries ||= (await query(`count(${name})`)).length === 0
          }
          if (!declared || !someWithoutSeries) problems.push(`${panel}: no data for ${expr}`)
        }
        return problems
      }
      await poll(
        'every dashboard query to return data',
        () => empty().catch((e: Error) => [e.message]),
        (problems) => problems.length === 0,
        90_000,
        { intervalMs: 1000 }
      )
    }
  )
})

describe('docker compose --profile replicated up: three brokers and replication factor 3', () => {
  const { project, slowly, queryOrNone, healthOf, produceBacklog, cleanUp } = testProject('-replicated', ['replicated'])

  before(async () => {
    assert.ok(await dockerAnswers(), 'no Docker engine answers (scripts/test.sh starts one when run as root)')
  })
  after(cleanUp)

  it(
    'every broker and service turns healthy; the source and each codec topic keep 3 replicas; every copy is read whole',
    { timeout: 1_200_000 },
    async () => {
      const { services } = await composeConfig(COMPOSE_ENV, ['replicated'])
      const started = Object.keys(services).filter((s) => s !== 'grafana')
      await project.compose(['up', '--detach', '--wait', '--wait-timeout', '600', ...started], 900_000)
      assert.deepEqual(await healthOf(), {
        'kafka-1': 'healthy',
        'kafka-2': 'healthy',
        'kafka-3': 'healthy',
        'topics-replicated': 'exited 0',
        producer: 'healthy',
        copier: 'healthy',
        consumer: 'healthy',
        prometheus: 'healthy'
      })

      await produceBacklog(5000)

      const source = flag(services.copier?.command, '--topic')
      const codecTopics = flag(services.consumer?.command, '--topic').split(',')
      const kafka = (tool: string, ...args: string[]): Promise<string> =>
        project.compose([
          'exec',
          '-T',
          'kafka-1',
          `/opt/kafka/bin/${tool}`,
          '--bootstrap-server',
          'kafka-1:19092',
          ...args
        ])
      // topic:partition:offset per line; the end offsets add up to the records the producer wrote.
      // Only those lines: the tool's JVM may log on the same stream.
      const offsets = await kafka('kafka-get-offsets.sh', '--topic', source)
      const ends = [...offsets.matchAll(/^[^:\s]+:\d+:(\d+)$/gm)].map((m) => Number(m[1]))
      const records = ends.reduce((sum, end) => sum + end, 0)
      assert.ok(ends.length > 0 && records >= 5000, `${source} holds ${records} records:\n${offsets}`)
      await waitForEveryCopyRead(queryOrNone, codecTopics.length, records, slowly)

      // The header line of each topic: "Topic: NAME  TopicId: …  PartitionCount: N  ReplicationFactor: R  Configs: …".
      const described = new Map(
        [
          ...(await kafka('kafka-topics.sh', '--describe')).matchAll(
            /^Topic: (\S+)\t.*ReplicationFactor: (\d+)\tConfigs: (.*)$/gm
          )
        ].map((m) => [m[1] ?? '', { replicas: Number(m[2]), configs: m[3] ?? '' }])
      )
      for (const topic of [source, ...codecTopics])
        assert.equal(described.get(topic)?.replicas, 3, `${topic}: ${JSON.stringify(described.get(topic))}`)
      assert.match(described.get(source)?.configs ?? '', /min\.insync\.replicas=2/)
    }
  )
})

/** The dashboard's default source topic (its `source` variable). */
function dashboardSource(): string {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/dashboards/squeeze.json'), 'utf8')) as {
    templating: { list: Array<{ name: string; query: string }> }
  }
  const variable = dashboard.templating.list.find((v) => v.name === 'source')
  if (variable === undefined) throw new Error('the dashboard has no source variable')
  return variable.query
}
