import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createConsumerGroupMetrics, createConsumerMetrics } from '../../lib/metrics/consumer-metrics.js'
import { createCopierMetrics } from '../../lib/metrics/copier-metrics.js'
import { createProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { createRegistry } from '../../lib/metrics/registry.js'
import { dashboardPanels, dashboardQueries, isObject, loadYaml, ROOT } from './manifests.js'

type Query = { panel: string; expr: string }

/**
 * Every series name the services register (producer and copier: producer metrics, copier: copier metrics,
 * consumer: consumer metrics, all: Node's process metrics), with whether it only ever grows. A histogram's
 * _bucket, _sum and _count series are counters too.
 */
async function registeredSeries(): Promise<Map<string, 'counter' | 'gauge'>> {
  const registry = createRegistry()
  createProducerMetrics(registry)
  createCopierMetrics(registry)
  createConsumerMetrics(registry)
  createConsumerGroupMetrics(registry)
  const series = new Map<string, 'counter' | 'gauge'>()
  for (const m of await registry.getMetricsAsJSON()) {
    const type = String(m.type)
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) series.set(`${m.name}${suffix}`, 'counter')
    else series.set(m.name, type === 'counter' ? 'counter' : 'gauge')
  }
  return series
}

const METRIC = /\b(squeeze_[a-zA-Z0-9_:]+)(\{[^}]*\})?(\[[^\]]+\])?/g

/** Metric names no service registers, and counters read without rate()/increase() (a raw counter restarts at 0 with the pod). */
function metricProblems(queries: Query[], series: Map<string, 'counter' | 'gauge'>): string[] {
  const problems: string[] = []
  for (const { panel, expr } of queries) {
    for (const m of expr.matchAll(METRIC)) {
      const name = m[1] as string
      const type = series.get(name)
      if (type === undefined) problems.push(`${panel}: ${name} is not registered by any service`)
      const before = expr.slice(0, m.index).trimEnd()
      if (type === 'counter' && !(m[3] !== undefined && /\b(rate|irate|increase)\($/.test(before)))
        problems.push(`${panel}: counter ${name} is not inside rate() or increase()`)
    }
  }
  return problems
}

const AGGREGATION =
  /\b(sum|min|max|avg|group|stddev|stdvar|count|count_values|bottomk|topk|quantile|limitk|limit_ratio)\s*(by|without)?\s*\(/g

function closingParen(expr: string, open: number): number {
  let depth = 0
  for (let i = open; i < expr.length; i++) {
    if (expr[i] === '(') depth++
    else if (expr[i] === ')' && --depth === 0) return i
  }
  return -1
}

/**
 * Aggregations that do not keep the `service` label: compose's Prometheus and the PodMonitor set it per
 * target, and without it the producer's and the copier's series of one metric add up.
 */
function groupingProblems(queries: Query[]): string[] {
  const problems: string[] = []
  for (const { panel, expr } of queries) {
    for (const m of expr.matchAll(AGGREGATION)) {
      const open = (m.index ?? 0) + m[0].length - 1
      let labels: string | undefined
      if (m[2] === 'by') labels = expr.slice(open + 1, closingParen(expr, open))
      else if (m[2] === undefined) labels = /^\s*by\s*\(([^)]*)\)/.exec(expr.slice(closingParen(expr, open) + 1))?.[1]
      if (
        labels === undefined ||
        !labels
          .split(',')
          .map((l) => l.trim())
          .includes('service')
      )
        problems.push(`${panel}: ${m[1] as string} does not group by service: ${expr}`)
    }
  }
  return problems
}

function panelQueries(title: RegExp): string[] {
  const panel = dashboardPanels().find((p) => title.test(p.title))
  assert.ok(panel !== undefined, `no panel titled ${String(title)}`)
  return (panel.targets ?? []).map((t) => t.expr.replace(/\s+/g, ' '))
}

describe('Grafana dashboard', () => {
  it('names only registered metrics and reads every counter through rate() or increase()', async () => {
    assert.deepEqual(metricProblems(dashboardQueries(), await registeredSeries()), [])
  })

  it('groups every aggregation by the service label that both scrape configurations set', async () => {
    assert.deepEqual(groupingProblems(dashboardQueries()), [])
    const prometheus = loadYaml(join(ROOT, 'deploy/prometheus/prometheus.yml')) as {
      scrape_configs: Array<{ job_name: string; static_configs: Array<{ labels?: Record<string, string> }> }>
    }
    for (const job of prometheus.scrape_configs.filter((c) => c.job_name.startsWith('squeeze-'))) {
      assert.ok(
        job.static_configs.every(
          (c) => isObject(c.labels) && c.labels.service === job.job_name.slice('squeeze-'.length)
        ),
        `${job.job_name}: no service label`
      )
    }
  })

  it('has a bytes-saved panel and a decompression CPU per GiB panel built on what the services export', async () => {
    const series = await registeredSeries()
    const saved = panelQueries(/^Bytes saved per codec/)
    assert.ok(
      saved.length > 0 &&
        saved.every((q) =>
          /squeeze_produced_uncompressed_bytes_total.*\) - sum by .*squeeze_produced_compressed_bytes_total/.test(q)
        ),
      saved.join('\n')
    )
    const decompress = panelQueries(/^Decompression CPU seconds per GiB/)
    assert.ok(
      decompress.length > 0 &&
        decompress.every((q) =>
          /rate\(squeeze_decompress_cpu_seconds_total.*\/ \(sum by .*rate\(squeeze_consumed_uncompressed_bytes_total.*\/ 1073741824\)$/.test(
            q
          )
        ),
      decompress.join('\n')
    )
    for (const name of [
      'squeeze_produced_uncompressed_bytes_total',
      'squeeze_produced_compressed_bytes_total',
      'squeeze_decompress_cpu_seconds_total',
      'squeeze_consumed_uncompressed_bytes_total'
    ])
      assert.equal(series.get(name), 'counter', name)
  })

  it('the checks catch a raw counter, an unknown metric and an aggregation without service', async () => {
    const broken = [
      { panel: 'raw', expr: 'sum by (service, codec) (squeeze_produced_compressed_bytes_total{topic=~"a.+"})' },
      { panel: 'unknown', expr: 'sum by (service) (rate(squeeze_compressed_bytes_total[5m]))' },
      {
        panel: 'histogram',
        expr: 'histogram_quantile(0.5, sum by (le, codec) (rate(squeeze_batch_records_bucket[5m])))'
      },
      { panel: 'postfix', expr: 'sum(rate(squeeze_records_consumed_total[5m])) by (topic)' },
      { panel: 'bare', expr: 'sum (rate(squeeze_records_produced_total[5m]))' }
    ]
    assert.deepEqual(metricProblems(broken, await registeredSeries()), [
      'raw: counter squeeze_produced_compressed_bytes_total is not inside rate() or increase()',
      'unknown: squeeze_compressed_bytes_total is not registered by any service'
    ])
    assert.deepEqual(
      groupingProblems(broken).map((p) => p.split(':')[0]),
      ['histogram', 'postfix', 'bare']
    )
    assert.deepEqual(
      groupingProblems([{ panel: 'ok', expr: 'sum(rate(squeeze_records_consumed_total[5m])) by (service, topic)' }]),
      []
    )
  })
})
