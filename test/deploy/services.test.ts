import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { DEFAULT_TARGETS, parseTargets } from '../../lib/copier/targets.js'
import { startTestKafka, type TestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { freePort } from '../helpers/ports.js'
import { dashboardQueries } from './manifests.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

interface Service {
  readonly name: string
  readonly port: number
  readonly child: ChildProcess
  readonly exited: Promise<number>
  stderr(): string
}

async function startService(name: string, args: string[]): Promise<Service> {
  const port = await freePort()
  const child = spawn(process.execPath, [CLI, ...args, '--metrics-port', String(port), '--metrics-host', '127.0.0.1'], {
    env: { ...process.env, KAFKA_BROKERS: '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000)
  })
  child.stdout?.resume()
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? -1 : 128)))
  )
  return { name, port, child, exited, stderr: () => stderr }
}

async function status(port: number, path: string): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) })
    await res.arrayBuffer()
    return res.status
  } catch {
    return 0
  }
}

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })
  assert.equal(res.status, 200)
  return res.text()
}

/** `probe` while the service runs: once it has exited no wait can succeed, so the probe fails with its stderr. */
function whileRunning<T>(service: Service, probe: () => Promise<T>): () => Promise<T> {
  return async () => {
    const { exitCode, signalCode } = service.child
    if (exitCode !== null || signalCode !== null)
      throw new Error(`${service.name} exited (${exitCode ?? signalCode}):\n${service.stderr()}`)
    return probe()
  }
}

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

function parseExposition(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
      if (m === null) throw new Error(`unparsable metrics line: ${line}`)
      const labels: Record<string, string> = {}
      for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
        labels[l[1] as string] = l[2] as string
      return { name: m[1] as string, labels, value: Number(m[3]) }
    })
}

/** Metric names a /metrics page declares (# TYPE), including a histogram's _bucket, _sum and _count series. */
function declaredFamilies(text: string): Set<string> {
  const names = new Set<string>()
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string]
    names.add(name)
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`)
  }
  return names
}

function total(
  samples: Sample[],
  name: string,
  filter: (labels: Record<string, string>) => boolean = () => true
): number {
  return samples.filter((s) => s.name === name && filter(s.labels)).reduce((sum, s) => sum + s.value, 0)
}

/**
 * Metric names of each query that no scraped page declares, and label matchers and grouping labels that no
 * scraped sample carries. A counter with labels has no sample until its first increment (the error counters
 * in a healthy run): its name is checked against the declarations, its labels cannot be.
 */
function unknownInQueries(samples: Sample[], declared: Set<string>, source: string): string[] {
  const problems: string[] = []
  const byName = new Map<string, Sample[]>()
  for (const s of samples) byName.set(s.name, [...(byName.get(s.name) ?? []), s])
  for (const { panel, expr } of dashboardQueries()) {
    const metrics = [...expr.matchAll(/\b(squeeze_[a-z0-9_]+)(\{([^}]*)\})?/g)]
    assert.ok(metrics.length > 0, `${panel}: query names no squeeze metric: ${expr}`)
    const labelsInExpr = new Set<string>()
    let allHaveSamples = true
    for (const m of metrics) {
      const name = m[1] as string
      const series = byName.get(name)
      if (!declared.has(name)) problems.push(`${panel}: ${name} is not exported by any running service`)
      if (series === undefined) {
        allHaveSamples = false
        continue
      }
      for (const s of series) for (const l of Object.keys(s.labels)) labelsInExpr.add(l)
      for (const matcher of (m[3] ?? '').matchAll(/([a-zA-Z_]+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
        const [, label, op, raw] = matcher as unknown as [string, string, string, string]
        if (!series.some((s) => label in s.labels)) problems.push(`${panel}: ${name} has no label ${label}`)
        const value = raw.replaceAll('$source', source).replaceAll('\\\\', '\\')
        const matches = (v: string): boolean =>
          op === '='
            ? v === value
            : op === '!='
              ? v !== value
              : op === '=~'
                ? new RegExp(`^(?:${value})$`).test(v)
                : !new RegExp(`^(?:${value})$`).test(v)
        if (!series.some((s) => matches(s.labels[label] ?? '')))
          problems.push(`${panel}: no ${name} series has ${label}${op}"${value}"`)
      }
    }
    if (!allHaveSamples) continue
    for (const by of expr.matchAll(/\bby \(([^)]*)\)/g)) {
      for (const label of (by[1] ?? '').split(',').map((l) => l.trim())) {
        // job, instance, pod and service are target labels Prometheus or the scrape configuration adds; le is on every histogram bucket.
        if (!['job', 'instance', 'pod', 'service', 'le'].includes(label) && !labelsInExpr.has(label))
          problems.push(`${panel}: groups by ${label}, which none of its metrics carries`)
      }
    }
  }
  return problems
}

describe('services before the broker is reachable', () => {
  it('each service answers /healthz 200 and /readyz 503 while it tries to connect, then exits 1 with a clear error', async () => {
    const closedPort = await freePort()
    const brokers = `127.0.0.1:${closedPort}`
    // A few seconds of waiting for the cluster: without it a service can give up before the first probe on a busy machine.
    const wait = ['--wait-for-brokers-s', '3']
    const commands: Record<string, string[]> = {
      producer: ['produce', '--brokers', brokers, '--topic', 't', '--rate', '10', ...wait],
      copier: ['copy', '--brokers', brokers, '--topic', 't', ...wait],
      consumer: ['consume', '--brokers', brokers, '--topic', 't', '--follow', ...wait]
    }
    await Promise.all(
      Object.entries(commands).map(async ([name, args]) => {
        const service = await startService(name, args)
        const seen = { healthz: new Set<number>(), readyz: new Set<number>() }
        let done = false
        void service.exited.then(() => {
          done = true
        })
        while (!done) {
          const [healthz, readyz] = await Promise.all([
            status(service.port, '/healthz'),
            status(service.port, '/readyz')
          ])
          if (healthz !== 0) seen.healthz.add(healthz)
          if (readyz !== 0) seen.readyz.add(readyz)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        assert.deepEqual([...seen.healthz], [200], `${name} /healthz`)
        assert.deepEqual([...seen.readyz], [503], `${name} /readyz`)
        assert.equal(await service.exited, 1, `${name} exit code`)
        assert.match(
          service.stderr(),
          new RegExp(`squeeze: cannot reach any Kafka broker.*${closedPort}.*\\[SQUEEZE_ERR_BROKER_UNREACHABLE\\]`),
          name
        )
      })
    )
  })
})

describe('services against a broker: health, readiness and the metrics the dashboard queries', () => {
  let kafka: TestKafka
  const services: Service[] = []
  before(async () => {
    kafka = await startTestKafka()
  })
  after(async () => {
    for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL')
    await kafka?.stop()
  })

  it('producer, copier and consumer become ready, export every metric the dashboard uses, and stop cleanly on SIGTERM', async () => {
    const brokers = kafka.broker.brokers.join(',')
    const source = `deploy-${randomUUID().slice(0, 8)}`
    const targets = parseTargets(DEFAULT_TARGETS.join(','), source)
    const producer = await startService('producer', [
      'produce',
      '--brokers',
      brokers,
      '--topic',
      source,
      '--create-partitions',
      '2',
      '--kind',
      'http',
      '--rate',
      '2000',
      '--records',
      '1000000',
      '-X',
      'linger.ms=50',
      '-X',
      'delivery.timeout.ms=30000',
      '-X',
      'request.timeout.ms=10000'
    ])
    services.push(producer)
    await poll(
      'producer /readyz 200',
      whileRunning(producer, () => status(producer.port, '/readyz')),
      (code) => code === 200,
      60_000,
      { describeState: producer.stderr }
    )
    const copier = await startService('copier', [
      'copy',
      '--brokers',
      brokers,
      '--topic',
      source,
      '--targets',
      DEFAULT_TARGETS.join(','),
      '-X',
      'linger.ms=50',
      '-X',
      'delivery.timeout.ms=30000',
      '-X',
      'request.timeout.ms=10000'
    ])
    services.push(copier)
    await poll(
      'copier /readyz 200',
      whileRunning(copier, () => status(copier.port, '/readyz')),
      (code) => code === 200,
      60_000,
      { describeState: copier.stderr }
    )
    const consumer = await startService('consumer', [
      'consume',
      '--brokers',
      brokers,
      '--topic',
      targets.map((t) => t.topic).join(','),
      '--format',
      'http',
      '--follow'
    ])
    services.push(consumer)
    await poll(
      'consumer /readyz 200',
      whileRunning(consumer, () => status(consumer.port, '/readyz')),
      (code) => code === 200,
      60_000,
      { describeState: consumer.stderr }
    )

    // A few thousand records through every stage, every destination read back.
    await poll(
      '3000 records produced',
      whileRunning(producer, async () =>
        total(parseExposition(await scrape(producer.port)), 'squeeze_records_produced_total')
      ),
      (n) => n >= 3000,
      60_000,
      { describeState: producer.stderr }
    )
    await poll(
      'records consumed from every destination',
      whileRunning(consumer, async () => {
        const samples = parseExposition(await scrape(consumer.port))
        return targets.map((t) => total(samples, 'squeeze_records_consumed_total', (l) => l.topic === t.topic))
      }),
      (counts) => counts.every((n) => n > 0),
      90_000,
      { describeState: consumer.stderr }
    )
    await poll(
      'copier lag reported',
      whileRunning(copier, async () =>
        parseExposition(await scrape(copier.port)).some((s) => s.name === 'squeeze_copier_lag_records')
      ),
      (reported) => reported,
      60_000,
      { describeState: copier.stderr }
    )

    for (const s of [producer, copier, consumer]) {
      assert.equal(await status(s.port, '/healthz'), 200, `${s.name} /healthz`)
      assert.equal(await status(s.port, '/readyz'), 200, `${s.name} /readyz`)
    }
    const pages = await Promise.all([producer, copier, consumer].map((s) => scrape(s.port)))
    const samples = pages.flatMap(parseExposition)
    const declared = new Set(pages.flatMap((page) => [...declaredFamilies(page)]))
    assert.deepEqual(unknownInQueries(samples, declared, source), [])
    // The check itself notices a metric that no service exports, and a label a metric does not carry.
    const withoutDecompress = new Set([...declared].filter((n) => n !== 'squeeze_decompress_cpu_seconds_total'))
    assert.ok(
      unknownInQueries(
        samples.filter((s) => s.name !== 'squeeze_decompress_cpu_seconds_total'),
        withoutDecompress,
        source
      ).some((p) => p.includes('squeeze_decompress_cpu_seconds_total is not exported'))
    )
    const withoutLevel = samples.map((s) =>
      s.name === 'squeeze_compress_cpu_seconds_total'
        ? { ...s, labels: { topic: s.labels.topic ?? '', codec: s.labels.codec ?? '' } }
        : s
    )
    assert.ok(unknownInQueries(withoutLevel, declared, source).some((p) => p.includes('groups by level')))

    for (const s of [producer, copier, consumer]) s.child.kill('SIGTERM')
    for (const s of [producer, copier, consumer])
      assert.equal(await s.exited, 0, `${s.name} exit code after SIGTERM:\n${s.stderr()}`)
  })
})
