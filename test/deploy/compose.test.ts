import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parseTargets } from '../../lib/copier/targets.js'
import { DEFAULT_PRODUCER_CONFIG, shutdownDeadlineMs } from '../../lib/producer/config.js'
import { composeConfig } from './compose-cli.js'
import { composeSchemaProblems, isObject, loadYaml, ROOT, type Json, type JsonObject } from './manifests.js'

const COMPOSE_FILE = join(ROOT, 'docker-compose.yml')
const SQUEEZE_COMMANDS = new Set(['produce', 'copy', 'consume'])

function flag(command: string[], name: string): string | undefined {
  const i = command.indexOf(name)
  return i < 0 ? undefined : command[i + 1]
}

function seconds(duration: Json | undefined): number {
  const m = /^(\d+)s$/.exec(String(duration ?? '10s'))
  return m === null ? Number.NaN : Number(m[1])
}

/** What the live comparison needs beyond the Compose schema. */
function composePolicyProblems(doc: JsonObject): string[] {
  const problems: string[] = []
  const services = isObject(doc.services) ? doc.services : {}
  const names = Object.keys(services)
  const squeeze = new Map<string, string[]>()
  for (const [name, s] of Object.entries(services)) {
    if (!isObject(s)) continue
    const command = Array.isArray(s.command) ? s.command.map(String) : []
    if (command[0] !== undefined && SQUEEZE_COMMANDS.has(command[0])) squeeze.set(name, command)
    const dependsOn = isObject(s.depends_on) ? s.depends_on : {}
    for (const [dep, spec] of Object.entries(dependsOn)) {
      if (!names.includes(dep)) problems.push(`${name}: depends_on ${dep}, which is not a service`)
      const condition = isObject(spec) ? spec.condition : undefined
      const target = services[dep]
      if (condition === 'service_healthy' && !(isObject(target) && isObject(target.healthcheck)))
        problems.push(`${name}: waits for ${dep} to be healthy, but ${dep} has no healthcheck`)
    }
    for (const volume of Array.isArray(s.volumes) ? s.volumes : []) {
      const source = String(volume).split(':')[0] ?? ''
      if (source.startsWith('./') && !existsSync(join(ROOT, source)))
        problems.push(`${name}: mounts ${source}, which does not exist`)
    }
  }
  for (const component of ['produce', 'copy', 'consume'])
    if (![...squeeze.values()].some((c) => c[0] === component)) problems.push(`no service runs squeeze ${component}`)
  for (const [name, command] of squeeze) {
    const s = services[name] as JsonObject
    const port = flag(command, '--metrics-port')
    if (flag(command, '--metrics-host') !== '0.0.0.0')
      problems.push(`${name}: --metrics-host 0.0.0.0 is missing (Prometheus could not scrape it)`)
    const test = isObject(s.healthcheck) && Array.isArray(s.healthcheck.test) ? s.healthcheck.test.join(' ') : ''
    if (!test.includes(`127.0.0.1:${port ?? '?'}/readyz`))
      problems.push(`${name}: healthcheck does not ask /readyz on the metrics port`)
    const setting = (key: string, fallback: number): number =>
      Number(command.find((c) => c.startsWith(`${key}=`))?.split('=')[1] ?? fallback)
    const timeouts = {
      ...DEFAULT_PRODUCER_CONFIG,
      lingerMs: setting('linger.ms', DEFAULT_PRODUCER_CONFIG.lingerMs),
      deliveryTimeoutMs: setting('delivery.timeout.ms', DEFAULT_PRODUCER_CONFIG.deliveryTimeoutMs),
      requestTimeoutMs: setting('request.timeout.ms', DEFAULT_PRODUCER_CONFIG.requestTimeoutMs)
    }
    if (timeouts.deliveryTimeoutMs < timeouts.lingerMs + timeouts.requestTimeoutMs)
      problems.push(`${name}: delivery.timeout.ms is below linger.ms + request.timeout.ms (squeeze refuses it)`)
    // The copier's deadline: the producer's, plus its last commit (services/copier/main.ts).
    const deadlineS = (shutdownDeadlineMs(timeouts) + 5000) / 1000
    if (command[0] !== 'consume' && !(seconds(s.stop_grace_period) > deadlineS))
      problems.push(
        `${name}: stop_grace_period ${String(s.stop_grace_period)} does not exceed the shutdown deadline (${deadlineS} s)`
      )
    if (s.read_only !== true) problems.push(`${name}: root filesystem is not read-only`)
  }
  const copy = [...squeeze.values()].find((c) => c[0] === 'copy')
  const consume = [...squeeze.values()].find((c) => c[0] === 'consume')
  if (copy !== undefined && consume !== undefined) {
    const expected = parseTargets(flag(copy, '--targets') ?? '', flag(copy, '--topic') ?? '')
      .map((t) => t.topic)
      .join(',')
    if (flag(consume, '--topic') !== expected)
      problems.push(`consumer reads ${String(flag(consume, '--topic'))}, the copier writes ${expected}`)
  }
  // Compose refuses to start without the password (`:?`); a `:-` default would be a password everyone knows.
  const grafana =
    isObject(services.grafana) && isObject(services.grafana.environment) ? services.grafana.environment : {}
  if (!/^\$\{[A-Z_]+:\?[^}]+\}$/.test(String(grafana.GF_SECURITY_ADMIN_PASSWORD ?? ''))) {
    problems.push(
      'grafana: GF_SECURITY_ADMIN_PASSWORD must come from a required variable (${NAME:?message}), with no default'
    )
  }
  const prometheus = loadYaml(join(ROOT, 'deploy/prometheus/prometheus.yml')) as unknown as {
    scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>
  }
  const targets = new Set(prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets)))
  for (const [name, command] of squeeze)
    if (!targets.has(`${name}:${flag(command, '--metrics-port') ?? '?'}`))
      problems.push(`prometheus does not scrape ${name}`)
  return problems
}

describe('docker-compose.yml', () => {
  it('validates against the Compose specification schema', () => {
    assert.deepEqual(composeSchemaProblems(loadYaml(COMPOSE_FILE)), [])
  })

  it('gates start order on health, scrapes every service and wires the copier to the consumers', () => {
    assert.deepEqual(composePolicyProblems(loadYaml(COMPOSE_FILE) as JsonObject), [])
    const doc = loadYaml(COMPOSE_FILE) as {
      services: Record<
        string,
        { depends_on?: Record<string, { condition: string; required?: boolean }>; profiles?: string[] }
      >
    }
    assert.deepEqual(doc.services.producer?.depends_on?.['kafka-1'], { condition: 'service_healthy' })
    assert.equal(doc.services.copier?.depends_on?.producer?.condition, 'service_healthy')
    assert.equal(doc.services.consumer?.depends_on?.copier?.condition, 'service_healthy')
    const replicated = Object.entries(doc.services)
      .filter(([, s]) => s.profiles?.includes('replicated'))
      .map(([n]) => n)
    assert.deepEqual(replicated.sort(), ['kafka-2', 'kafka-3', 'topics-replicated'])
  })

  it('a broken copy fails: a wrong type and an unknown depends_on condition', () => {
    const broken = loadYaml(COMPOSE_FILE) as { services: Record<string, JsonObject> }
    const copier = broken.services.copier as JsonObject
    copier.depends_on = { producer: { condition: 'service_ready' } }
    copier.stop_grace_period = [60]
    const problems = composeSchemaProblems(broken as unknown as Json)
    assert.ok(
      problems.some((p) => p.startsWith('/services/copier/depends_on')),
      problems.join('\n')
    )
    assert.ok(
      problems.some((p) => p.startsWith('/services/copier/stop_grace_period must be string')),
      problems.join('\n')
    )
  })

  it('a broken copy fails: a consumer without a healthcheck that others wait for, and a missing mount', () => {
    const broken = loadYaml(COMPOSE_FILE) as { services: Record<string, JsonObject> }
    delete (broken.services.copier as JsonObject).healthcheck
    ;(broken.services.prometheus as JsonObject).volumes = [
      './deploy/prometheus/missing.yml:/etc/prometheus/prometheus.yml:ro'
    ]
    const problems = composePolicyProblems(broken as unknown as JsonObject)
    assert.ok(
      problems.includes('consumer: waits for copier to be healthy, but copier has no healthcheck'),
      problems.join('\n')
    )
    assert.ok(
      problems.includes('prometheus: mounts ./deploy/prometheus/missing.yml, which does not exist'),
      problems.join('\n')
    )
  })

  it("Grafana's admin password comes from GRAFANA_ADMIN_PASSWORD, without which Compose refuses the file", async () => {
    const { GRAFANA_ADMIN_PASSWORD: _unset, ...without } = process.env
    await assert.rejects(
      composeConfig(without),
      /required variable GRAFANA_ADMIN_PASSWORD is missing a value: set GRAFANA_ADMIN_PASSWORD/
    )
    const config = await composeConfig({ ...without, GRAFANA_ADMIN_PASSWORD: 's3cret' })
    assert.equal(config.services.grafana?.environment?.GF_SECURITY_ADMIN_PASSWORD, 's3cret')
    const withDefault = loadYaml(COMPOSE_FILE) as { services: { grafana: { environment: Record<string, string> } } }
    withDefault.services.grafana.environment.GF_SECURITY_ADMIN_PASSWORD = '${GRAFANA_ADMIN_PASSWORD:-admin}'
    assert.ok(
      composePolicyProblems(withDefault as unknown as JsonObject).some((p) =>
        p.startsWith('grafana: GF_SECURITY_ADMIN_PASSWORD')
      )
    )
  })
})
