import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { CompareReport } from '../../lib/compare/compare-report.js'
import { poll, type PollOptions } from '../helpers/poll.js'
import {
  addressOn,
  composeService,
  docker,
  dockerAnswers,
  healthy,
  runService,
  type ComposeService
} from './compose-runner.js'
import { dashboardQueries, ROOT } from './manifests.js'

/**
 * The project's image built from the Dockerfile and docker-compose.yml's services run from it, as containers on
 * one bridge network, against the containerized broker and Prometheus the compose file names.
 * Needs a Docker engine with the images of scripts/build-images.sh; scripts/test.sh provides both (as root).
 */

interface PromSeries {
  metric: Record<string, string>
  value: [number, string]
}

function flag(command: string[], name: string): string {
  const i = command.indexOf(name)
  const value = i < 0 ? undefined : command[i + 1]
  if (value === undefined) throw new Error(`no ${name} in ${command.join(' ')}`)
  return value
}

/** As a user sets it before `docker compose up`: the file has no default for the Grafana admin password. */
const COMPOSE_ENV = { ...process.env, GRAFANA_ADMIN_PASSWORD: randomUUID() }

describe('docker-compose.yml run from the built image', () => {
  const id = randomUUID().slice(0, 8)
  const network = `squeeze-it-${id}`
  const label = `org.squeeze.test=${id}`
  const out = mkdtempSync(join(tmpdir(), 'squeeze-compose-'))
  const containers = new Map<string, string>()
  let prometheus = ''

  const nameOf = (service: string): string => `${network}-${service}`
  const start = async (s: ComposeService): Promise<void> => {
    containers.set(s.name, nameOf(s.name))
    await runService(s, network, nameOf(s.name), label)
  }
  const logs = async (): Promise<string> => {
    const parts = await Promise.all(
      [...containers.values()].map(
        async (c) => `--- ${c}\n${await docker(['logs', '--tail', '30', c]).catch((e: Error) => e.message)}`
      )
    )
    return parts.join('\n')
  }
  // Each probe spawns docker or asks Prometheus: once a second is enough.
  const slowly: PollOptions = { intervalMs: 1000, describeState: logs }
  const waitHealthy = (s: ComposeService, timeoutMs = 180_000): Promise<boolean> =>
    poll(
      `${s.name} to pass its compose healthcheck`,
      () => healthy(s, nameOf(s.name)),
      (ok) => ok,
      timeoutMs,
      slowly
    )
  const query = async (promql: string): Promise<PromSeries[]> => {
    const res = await fetch(`http://${prometheus}:9090/api/v1/query?query=${encodeURIComponent(promql)}`, {
      signal: AbortSignal.timeout(10_000)
    })
    const body = (await res.json()) as { status: string; error?: string; data?: { result: PromSeries[] } }
    if (body.status !== 'success' || body.data === undefined) throw new Error(`${promql}: ${body.error ?? res.status}`)
    return body.data.result
  }
  // Prometheus answers only once its container is up and has scraped: until then a poll sees no series.
  const queryOrNone = (promql: string): Promise<PromSeries[]> => query(promql).catch(() => [])

  before(async () => {
    assert.ok(await dockerAnswers(), 'no Docker engine answers (scripts/test.sh starts one when run as root)')
    await docker(['network', 'create', '--label', label, network])
  })
  after(async () => {
    const ids = await docker(['ps', '-aq', '--filter', `label=${label}`]).catch(() => '')
    if (ids !== '') await docker(['rm', '-f', ...ids.split('\n')]).catch(() => '')
    await docker(['network', 'rm', network]).catch(() => '')
    rmSync(out, { recursive: true, force: true })
  })

  const producer = composeService('producer', COMPOSE_ENV)
  const copier = composeService('copier', COMPOSE_ENV)
  const consumer = composeService('consumer', COMPOSE_ENV)

  it('the Dockerfile builds an image that runs as a non-root user and loads its native codecs', async () => {
    // The build's RUN steps use the host's network for npm (no registry is reachable from the bridge).
    await docker(['build', '--network', 'host', '--tag', producer.image, ROOT], 1_200_000)
    assert.equal(await docker(['image', 'inspect', '--format', '{{.Config.User}}', producer.image]), '1000:1000')
    const loaded = await docker([
      'run',
      '--rm',
      '--read-only',
      '--network',
      'none',
      '--entrypoint',
      'node',
      producer.image,
      '-e',
      "for (const m of ['squeeze-lz4', 'zstd-napi', 'snappy']) require(m); process.stdout.write(process.getuid() + ' ' + process.version)"
    ])
    assert.match(loaded, /^1000 v\d+\./)
  })

  it('producer → copier → consumer on one bridge network; Prometheus scrapes all three; its stored ratio per codec topic matches squeeze compare', async () => {
    const kafka = composeService('kafka-1', COMPOSE_ENV)
    await start(kafka)
    await start(composeService('prometheus', COMPOSE_ENV))
    prometheus = await addressOn(nameOf('prometheus'), network)
    await waitHealthy(kafka)

    // A fixed backlog first, so the copier and compare batch the same records the same way.
    await start(producer)
    await waitHealthy(producer)
    await poll(
      'the producer to be scraped with 10000 records produced',
      () => queryOrNone(`sum(squeeze_records_produced_total{job="squeeze-producer"})`),
      (r) => Number(r[0]?.value[1] ?? 0) >= 10_000,
      120_000,
      slowly
    )
    await docker(
      ['stop', '--time', String(producer.stopGraceSeconds), nameOf('producer')],
      (producer.stopGraceSeconds + 30) * 1000
    )
    assert.equal(await docker(['inspect', '--format', '{{.State.ExitCode}}', nameOf('producer')]), '0', await logs())

    await start(copier)
    await waitHealthy(copier)
    await start(consumer)
    await waitHealthy(consumer)

    const source = flag(copier.command, '--topic')
    const brokers = copier.environment['KAFKA_BROKERS'] ?? ''
    chmodSync(out, 0o777)
    await docker(
      [
        'run',
        '--rm',
        '--label',
        label,
        '--network',
        network,
        '-v',
        `${out}:/out`,
        producer.image,
        'compare',
        '--topic',
        source,
        '--brokers',
        brokers,
        '--targets',
        flag(copier.command, '--targets'),
        '--destination',
        'compare.{source}.{target}',
        '--json',
        '/out/compare.json',
        '--log-level',
        'warn'
      ],
      600_000
    )
    const report = JSON.parse(readFileSync(join(out, 'compare.json'), 'utf8')) as CompareReport
    assert.ok(report.source.records >= 10_000, `compare read the whole backlog (${report.source.records} records)`)

    // Every copy holds the whole backlog in Prometheus's latest scrape of the copier; then the ratios are final.
    const byTopic = await poll(
      'the copier to have copied every source record into every codec topic',
      () => queryOrNone(`sum by (topic) (squeeze_records_produced_total{job="squeeze-copier"})`),
      (counts) =>
        counts.length === report.targets.length && counts.every((c) => Number(c.value[1]) === report.source.records),
      180_000,
      slowly
    )
    assert.equal(byTopic.length, report.targets.length)
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
    // The consumer follows every codec topic from the earliest offset, so it reads each copy whole, once; Prometheus
    // shows that a scrape or two after the copier's last commit (one query right after the copier's counts raced it).
    const consumerState = async (): Promise<string> =>
      `lag ${JSON.stringify((await queryOrNone('squeeze_consumer_lag_records')).map((r) => [r.metric['topic'], r.metric['partition'], r.value[1]]))}\n${await logs()}`
    await poll(
      'the consumer to have read every copied record of every codec topic',
      () => queryOrNone(`sum by (topic) (squeeze_records_consumed_total{job="squeeze-consumer"})`),
      (counts) =>
        counts.length === report.targets.length && counts.every((c) => Number(c.value[1]) === report.source.records),
      120_000,
      { ...slowly, describeState: consumerState }
    )
  })

  it('every Grafana dashboard query returns data from that Prometheus while the three services run', async () => {
    await docker(['start', nameOf('producer')])
    await waitHealthy(producer)
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
          const meta = (await (await fetch(`http://${prometheus}:9090/api/v1/metadata?metric=${family}`)).json()) as {
            data: Record<string, unknown[]>
          }
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
  })
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
