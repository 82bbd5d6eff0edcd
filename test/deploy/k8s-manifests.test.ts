import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { parseTargets } from '../../lib/copier/targets.js'
import { DEFAULT_PRODUCER_CONFIG, shutdownDeadlineMs } from '../../lib/producer/config.js'
import {
  containersOf,
  isObject,
  labelsOf,
  loadYamlDocuments,
  podSpecOf,
  renderKustomization,
  ROOT,
  schemaProblems,
  yamlFilesUnder,
  type JsonObject,
  type Resource
} from './manifests.js'

const K8S = join(ROOT, 'k8s')
const OVERLAYS = ['dev', 'prod', 'existing-cluster', 'node-logs', 'local-kafka'] as const
const WITH_STRIMZI = new Set(['dev', 'prod'])

/** What squeeze needs of its own resources beyond the API schemas (which, e.g., leave `image` optional). */
function policyProblems(resources: Resource[]): string[] {
  const problems: string[] = []
  const find = (kind: string, name: string): Resource | undefined =>
    resources.find((r) => r.kind === kind && r.metadata.name === name)
  const config = find('ConfigMap', 'squeeze-config')
  const data = isObject(config?.data) ? config.data : {}
  if (config === undefined) problems.push('ConfigMap squeeze-config is missing')
  const timeouts = {
    ...DEFAULT_PRODUCER_CONFIG,
    deliveryTimeoutMs: Number(data.DELIVERY_TIMEOUT_MS ?? DEFAULT_PRODUCER_CONFIG.deliveryTimeoutMs),
    requestTimeoutMs: Number(data.REQUEST_TIMEOUT_MS ?? DEFAULT_PRODUCER_CONFIG.requestTimeoutMs)
  }
  if (timeouts.deliveryTimeoutMs < timeouts.lingerMs + timeouts.requestTimeoutMs) {
    problems.push(
      `squeeze-config: DELIVERY_TIMEOUT_MS ${timeouts.deliveryTimeoutMs} is below linger.ms + REQUEST_TIMEOUT_MS (the services refuse it)`
    )
  }
  // The copier's deadline: the producer's, plus its last commit (services/copier/main.ts).
  const deadlineS = (shutdownDeadlineMs(timeouts) + 5000) / 1000
  const allWorkloads = resources.filter(
    (r) => r.kind === 'Deployment' || r.kind === 'StatefulSet' || r.kind === 'DaemonSet'
  )
  // squeeze's own pods; another workload in the overlay (local-kafka's broker) only counts as a Service's target.
  const workloads = allWorkloads.filter((r) => labelsOf(r)['app.kubernetes.io/name'] === 'squeeze')
  for (const component of ['producer', 'consumer'])
    if (find('Deployment', `squeeze-${component}`) === undefined)
      problems.push(`Deployment squeeze-${component} is missing`)
  // Its pods' names are the copiers' transactional ids: a Deployment would give a replaced pod a new one.
  if (find('StatefulSet', 'squeeze-copier') === undefined)
    problems.push('StatefulSet squeeze-copier is missing (the copier needs stable pod names for its transactional ids)')
  for (const d of workloads) {
    const id = `${d.kind}/${d.metadata.name}`
    const pod = podSpecOf(d) ?? {}
    const grace = Number(pod.terminationGracePeriodSeconds ?? 30)
    if (!(grace > deadlineS))
      problems.push(
        `${id}: terminationGracePeriodSeconds ${grace} does not exceed the shutdown deadline (${deadlineS} s)`
      )
    const podSecurity = isObject(pod.securityContext) ? pod.securityContext : {}
    const containers = containersOf(d)
    if (containers.length === 0) problems.push(`${id}: no containers`)
    for (const c of containers) {
      const cid = `${id} container ${String(c.name)}`
      if (typeof c.image !== 'string' || c.image.trim() === '') problems.push(`${cid}: no image`)
      const probe = (name: string): string | undefined => {
        const p = c[name]
        return isObject(p) && isObject(p.httpGet) && typeof p.httpGet.path === 'string' ? p.httpGet.path : undefined
      }
      if (probe('livenessProbe') !== '/healthz') problems.push(`${cid}: livenessProbe must GET /healthz`)
      if (probe('readinessProbe') !== '/readyz') problems.push(`${cid}: readinessProbe must GET /readyz`)
      const resourcesOf = isObject(c.resources) ? c.resources : {}
      for (const part of ['requests', 'limits']) {
        const values = resourcesOf[part]
        if (!isObject(values) || values.cpu === undefined || values.memory === undefined)
          problems.push(`${cid}: resources.${part} needs cpu and memory`)
      }
      const sc = isObject(c.securityContext) ? c.securityContext : {}
      if (sc.runAsNonRoot !== true && podSecurity.runAsNonRoot !== true)
        problems.push(`${cid}: runAsNonRoot is not set`)
      if (sc.readOnlyRootFilesystem !== true) problems.push(`${cid}: readOnlyRootFilesystem is not true`)
      if (sc.allowPrivilegeEscalation !== false) problems.push(`${cid}: allowPrivilegeEscalation is not false`)
      const drop = isObject(sc.capabilities) && Array.isArray(sc.capabilities.drop) ? sc.capabilities.drop : []
      if (!drop.includes('ALL')) problems.push(`${cid}: capabilities do not drop ALL`)
      const args = Array.isArray(c.args) ? c.args.map(String) : []
      if (args[args.indexOf('--metrics-host') + 1] !== '0.0.0.0')
        problems.push(`${cid}: --metrics-host 0.0.0.0 is missing (the probes could not reach 127.0.0.1)`)
      const ports = Array.isArray(c.ports) ? c.ports.filter(isObject) : []
      const metricsPort = ports.find((p) => p.name === 'metrics')?.containerPort
      if (String(metricsPort) !== args[args.indexOf('--metrics-port') + 1])
        problems.push(`${cid}: port "metrics" does not match --metrics-port`)
      for (const ref of String(args.join(' ')).matchAll(/\$\(([A-Z_]+)\)/g)) {
        const ownEnv = Array.isArray(c.env) ? c.env.filter(isObject).map((e) => e.name) : []
        if (ref[1] !== undefined && !(ref[1] in data) && !ownEnv.includes(ref[1]))
          problems.push(`${cid}: args use $(${ref[1]}), which squeeze-config does not define`)
      }
    }
  }
  const podLabels = allWorkloads.map((d) => {
    const spec = d.spec as JsonObject
    const template = spec.template as JsonObject
    return isObject(template.metadata) && isObject(template.metadata.labels) ? template.metadata.labels : {}
  })
  const selects = (selector: Json | undefined): boolean => {
    const wanted = isObject(selector) ? selector : {}
    return podLabels.some((labels) => Object.entries(wanted).every(([k, v]) => labels[k] === v))
  }
  for (const r of resources) {
    const spec = isObject(r.spec) ? r.spec : {}
    const id = `${r.kind}/${r.metadata.name}`
    if (r.kind === 'Service' && !selects(spec.selector)) problems.push(`${id}: selector matches no pod template`)
    if (
      (r.kind === 'PodDisruptionBudget' || r.kind === 'PodMonitor') &&
      !selects(isObject(spec.selector) ? spec.selector.matchLabels : undefined)
    )
      problems.push(`${id}: selector matches no pod template`)
    if (r.kind === 'NetworkPolicy') problems.push(...networkPolicyProblems(r, data, selects))
    if (r.kind === 'HorizontalPodAutoscaler') {
      const ref = isObject(spec.scaleTargetRef) ? spec.scaleTargetRef : {}
      const target = find(String(ref.kind), String(ref.name))
      if (target === undefined)
        problems.push(`${id}: scaleTargetRef ${String(ref.kind)}/${String(ref.name)} does not exist`)
      // Every apply would reset the autoscaler's choice to the manifest's count.
      else if (isObject(target.spec) && 'replicas' in target.spec)
        problems.push(`${target.kind}/${target.metadata.name}: sets spec.replicas, which ${id} manages`)
    }
  }
  const consumer = find('Deployment', 'squeeze-consumer')
  const consumerArgs =
    isObject(consumer?.spec) &&
    isObject(consumer.spec.template) &&
    isObject(consumer.spec.template.spec) &&
    Array.isArray(consumer.spec.template.spec.containers) &&
    isObject(consumer.spec.template.spec.containers[0])
      ? consumer.spec.template.spec.containers[0].args
      : undefined
  if (consumer !== undefined && !(Array.isArray(consumerArgs) && consumerArgs.includes('--group')))
    problems.push('Deployment/squeeze-consumer: consume without --group (every replica would read every partition)')
  if (
    !resources.some(
      (r) =>
        r.kind === 'HorizontalPodAutoscaler' &&
        isObject(r.spec) &&
        isObject(r.spec.scaleTargetRef) &&
        r.spec.scaleTargetRef.name === 'squeeze-consumer'
    )
  )
    problems.push('no HorizontalPodAutoscaler for the consumers')
  // The consumers read exactly the copier's destinations, as the copier names them.
  if (typeof data.COPY_TARGETS === 'string' && typeof data.SOURCE_TOPIC === 'string') {
    const expected = parseTargets(data.COPY_TARGETS, data.SOURCE_TOPIC).map((t) => t.topic)
    if (data.DESTINATION_TOPICS !== expected.join(','))
      problems.push(
        `squeeze-config: DESTINATION_TOPICS ${String(data.DESTINATION_TOPICS)} is not the copier's destinations ${expected.join(',')}`
      )
    const kafka = resources.find((r) => r.kind === 'Kafka')
    if (kafka !== undefined) {
      for (const topic of [data.SOURCE_TOPIC, ...expected]) {
        const kt = resources.find(
          (r) =>
            r.kind === 'KafkaTopic' && (r.metadata.name === topic || (isObject(r.spec) && r.spec.topicName === topic))
        )
        const ktConfig = kt !== undefined && isObject(kt.spec) && isObject(kt.spec.config) ? kt.spec.config : {}
        if (kt === undefined) problems.push(`no KafkaTopic for ${topic}`)
        else if (ktConfig['compression.type'] !== 'producer')
          problems.push(`KafkaTopic ${topic}: compression.type must be producer`)
      }
    }
  }
  const kafka = resources.find((r) => r.kind === 'Kafka')
  if (kafka !== undefined) {
    for (const r of resources.filter((x) => x.kind.startsWith('Kafka') && x.kind !== 'Kafka')) {
      const cluster = isObject(r.metadata.labels) ? r.metadata.labels['strimzi.io/cluster'] : undefined
      if (cluster !== kafka.metadata.name)
        problems.push(
          `${r.kind}/${r.metadata.name}: strimzi.io/cluster ${String(cluster)} is not ${kafka.metadata.name}`
        )
    }
    const user = resources.find((r) => r.kind === 'KafkaUser')
    const auth =
      user !== undefined && isObject(user.spec) && isObject(user.spec.authentication)
        ? user.spec.authentication.type
        : undefined
    if (auth !== 'scram-sha-512') problems.push('no KafkaUser with scram-sha-512')
    for (const d of workloads) {
      for (const c of containersOf(d)) {
        const env = Array.isArray(c.env) ? c.env.filter(isObject) : []
        const password = env.find((e) => e.name === 'KAFKA_SASL_PASSWORD')
        const ref =
          isObject(password?.valueFrom) && isObject(password.valueFrom.secretKeyRef)
            ? password.valueFrom.secretKeyRef
            : {}
        if (ref.name !== user?.metadata.name || ref.key !== 'password')
          problems.push(
            `${d.kind}/${d.metadata.name}: KAFKA_SASL_PASSWORD must come from the KafkaUser's Secret ${String(user?.metadata.name)} key password`
          )
      }
    }
    if (data.KAFKA_SASL_USERNAME !== user?.metadata.name)
      problems.push('squeeze-config KAFKA_SASL_USERNAME is not the KafkaUser')
    const bootstrapHost = String(data.KAFKA_BROKERS ?? '').split(':')[0]
    if (bootstrapHost !== `${kafka.metadata.name}-kafka-bootstrap`)
      problems.push(`squeeze-config KAFKA_BROKERS ${String(data.KAFKA_BROKERS)} is not the Strimzi bootstrap service`)
    problems.push(...strimziProblems(kafka, resources))
  }
  return problems
}

type Json = JsonObject[string]

interface StrimziReleases {
  supported: { from: string; through: string }
  releases: Record<string, { crdVersions: string[]; kafkaVersions: string[] }>
}

const STRIMZI = JSON.parse(readFileSync(join(ROOT, 'schema/k8s/strimzi-releases.json'), 'utf8')) as StrimziReleases

function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)]
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0)
  return 0
}

/** The Strimzi releases squeeze's manifests are written for (schema/k8s/strimzi-releases.json `supported`). */
function supportedStrimziReleases(): string[] {
  const { from, through } = STRIMZI.supported
  return Object.keys(STRIMZI.releases)
    .filter((r) => compareVersions(r, from) >= 0 && compareVersions(r, through) <= 0)
    .sort(compareVersions)
}

// Strimzi 0.48.0 CHANGELOG: "The `strimzi.io/node-pools` and `strimzi.io/kraft` annotations are not required
// anymore and will be ignored if set."
const IGNORED_KAFKA_ANNOTATIONS = ['strimzi.io/kraft', 'strimzi.io/node-pools']

/** Every Strimzi release of the supported range must serve the manifests' API version and accept their Kafka version. */
function strimziProblems(kafka: Resource, resources: Resource[]): string[] {
  const problems: string[] = []
  const annotations = isObject(kafka.metadata.annotations) ? kafka.metadata.annotations : {}
  for (const a of IGNORED_KAFKA_ANNOTATIONS)
    if (a in annotations) problems.push(`Kafka/${kafka.metadata.name}: annotation ${a} is ignored since Strimzi 0.48.0`)
  const version = isObject(kafka.spec) && isObject(kafka.spec.kafka) ? String(kafka.spec.kafka.version) : 'unset'
  const releases = supportedStrimziReleases()
  if (releases.length === 0) problems.push('schema/k8s/strimzi-releases.json: the supported range holds no release')
  for (const release of releases) {
    const { crdVersions, kafkaVersions } = STRIMZI.releases[release] as StrimziReleases['releases'][string]
    if (!kafkaVersions.includes(version))
      problems.push(
        `Kafka/${kafka.metadata.name}: Strimzi ${release} does not support Kafka ${version} (it supports ${kafkaVersions.join(', ')})`
      )
    for (const api of new Set(
      resources
        .filter((r) => r.apiVersion.startsWith('kafka.strimzi.io/'))
        .map((r) => r.apiVersion.split('/')[1] as string)
    )) {
      if (!crdVersions.includes(api)) problems.push(`Strimzi ${release} does not serve kafka.strimzi.io/${api}`)
    }
  }
  return problems
}

function validateTree(k8sDir: string): string[] {
  const problems: string[] = []
  for (const file of yamlFilesUnder(k8sDir)) {
    try {
      const docs = loadYamlDocuments(file)
      if (basename(file) === 'kustomization.yaml') continue
      for (const doc of docs)
        problems.push(...schemaProblems(doc as Resource).map((p) => `${relative(k8sDir, file)}: ${p}`))
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err))
    }
  }
  for (const overlay of OVERLAYS) {
    try {
      const resources = renderKustomization(join(k8sDir, 'overlays', overlay))
      problems.push(...resources.flatMap(schemaProblems).map((p) => `overlay ${overlay}: ${p}`))
      problems.push(...policyProblems(resources).map((p) => `overlay ${overlay}: ${p}`))
    } catch (err) {
      problems.push(`overlay ${overlay}: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  return problems
}

type Port = { port?: Json; protocol?: string }
type Rule = { from?: JsonObject[]; to?: JsonObject[]; ports?: Port[] }
type PolicySpec = { podSelector?: JsonObject; policyTypes?: string[]; ingress?: Rule[]; egress?: Rule[] }

/** A peer that is the monitoring namespace, whole, and nothing else. */
function isMonitoringNamespace(peer: JsonObject): boolean {
  const selector = isObject(peer.namespaceSelector) ? peer.namespaceSelector : {}
  const labels = isObject(selector.matchLabels) ? selector.matchLabels : {}
  return (
    labels['kubernetes.io/metadata.name'] === 'monitoring' &&
    peer.podSelector === undefined &&
    peer.ipBlock === undefined
  )
}

/**
 * squeeze's NetworkPolicy: it selects the squeeze pods, lets in only the monitoring namespace on the metrics port,
 * and lets out only DNS and the port of KAFKA_BROKERS.
 */
function networkPolicyProblems(
  r: Resource,
  data: JsonObject,
  selects: (selector: Json | undefined) => boolean
): string[] {
  const problems: string[] = []
  const id = `NetworkPolicy/${r.metadata.name}`
  const spec = (isObject(r.spec) ? r.spec : {}) as PolicySpec
  const ports = (rule: Rule): Port[] => rule.ports ?? []
  if (!selects(spec.podSelector?.matchLabels)) problems.push(`${id}: podSelector matches no pod template`)
  if (!['Ingress', 'Egress'].every((t) => spec.policyTypes?.includes(t))) {
    problems.push(`${id}: policyTypes must hold Ingress and Egress`)
  }
  const ingress = spec.ingress ?? []
  const fromMonitoring = (rule: Rule): boolean =>
    (rule.from ?? []).length > 0 && (rule.from ?? []).every(isMonitoringNamespace)
  const onMetrics = (rule: Rule): boolean => ports(rule).length > 0 && ports(rule).every((p) => p.port === 'metrics')
  if (ingress.length === 0 || !ingress.every((rule) => fromMonitoring(rule) && onMetrics(rule))) {
    problems.push(`${id}: ingress must allow only the metrics port, only from the monitoring namespace`)
  }
  const egress = spec.egress ?? []
  if (egress.some((rule) => (rule.to ?? []).length === 0 || ports(rule).length === 0)) {
    problems.push(`${id}: an egress rule allows any peer or any port`)
  }
  const dns = egress.filter((rule) => ports(rule).every((p) => p.port === 53))
  if (!['UDP', 'TCP'].every((protocol) => dns.some((rule) => ports(rule).some((p) => p.protocol === protocol)))) {
    problems.push(`${id}: egress does not allow DNS (53 UDP and TCP)`)
  }
  const brokerPort = Number(/:(\d+)$/.exec(String(data.KAFKA_BROKERS ?? ''))?.[1])
  const brokers = egress.filter((rule) => !dns.includes(rule))
  if (!brokers.some((rule) => ports(rule).some((p) => p.port === brokerPort))) {
    problems.push(`${id}: egress does not allow the brokers' port ${brokerPort} (KAFKA_BROKERS)`)
  }
  return problems
}

function editedCopy(edit: (k8sDir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-k8s-'))
  cpSync(K8S, join(dir, 'k8s'), { recursive: true })
  cpSync(join(ROOT, 'schema'), join(dir, 'schema'), { recursive: true })
  edit(join(dir, 'k8s'))
  return join(dir, 'k8s')
}

function replaceIn(file: string, from: string | RegExp, to: string): void {
  const text = readFileSync(file, 'utf8')
  const next = text.replace(from, to)
  assert.notEqual(next, text, `${file}: nothing replaced`)
  writeFileSync(file, next)
}

describe('Kubernetes manifests', () => {
  it("every file and every rendered overlay validates against the Kubernetes and Strimzi schemas and squeeze's policy", () => {
    assert.deepEqual(validateTree(K8S), [])
  })

  it('overlays render the resources each deployment needs', () => {
    for (const overlay of OVERLAYS) {
      const resources = renderKustomization(join(K8S, 'overlays', overlay))
      const kinds = new Set(resources.map((r) => r.kind))
      for (const kind of [
        'ConfigMap',
        'Deployment',
        'StatefulSet',
        'Service',
        'PodDisruptionBudget',
        'HorizontalPodAutoscaler'
      ])
        assert.ok(kinds.has(kind), `${overlay}: ${kind}`)
      for (const kind of ['Kafka', 'KafkaNodePool', 'KafkaTopic', 'KafkaUser'])
        assert.equal(kinds.has(kind), WITH_STRIMZI.has(overlay), `${overlay}: ${kind}`)
      assert.ok(
        resources.every((r) => r.kind === 'Namespace' || typeof r.metadata.namespace === 'string'),
        `${overlay}: every resource gets the overlay's namespace`
      )
    }
    const prod = renderKustomization(join(K8S, 'overlays', 'prod'))
    const pools = prod
      .filter((r) => r.kind === 'KafkaNodePool')
      .map((r) => ({ roles: (r.spec as JsonObject).roles, replicas: (r.spec as JsonObject).replicas }))
    assert.deepEqual(pools, [
      { roles: ['controller'], replicas: 3 },
      { roles: ['broker'], replicas: 3 }
    ])
    const copier = prod.find((r) => r.metadata.name === 'squeeze-copier' && r.kind === 'StatefulSet') as Resource
    assert.equal(containersOf(copier)[0]?.image, 'registry.example.com/squeeze:0.1.0')
    assert.ok((containersOf(copier)[0]?.args as string[]).includes('--ssl-ca-file'))
  })

  it('no overlay needs the Prometheus Operator; the podmonitor component adds a PodMonitor that labels each target with its service', () => {
    for (const dir of ['base', ...OVERLAYS.map((o) => `overlays/${o}`)]) {
      const operatorKinds = renderKustomization(join(K8S, dir)).filter((r) =>
        r.apiVersion.startsWith('monitoring.coreos.com/')
      )
      assert.deepEqual(
        operatorKinds.map((r) => `${r.kind}/${r.metadata.name}`),
        [],
        `${dir} needs the Prometheus Operator's CRDs`
      )
    }
    // As each overlay's comment says: uncomment its `components:` lines.
    const dir = editedCopy((k8s) => {
      // node-logs and local-kafka build on existing-cluster and take its components.
      for (const overlay of OVERLAYS.filter((o) => o !== 'node-logs' && o !== 'local-kafka')) {
        const file = join(k8s, 'overlays', overlay, 'kustomization.yaml')
        if (readFileSync(file, 'utf8').includes('\n# components:\n'))
          replaceIn(file, '\n# components:\n', '\ncomponents:\n')
        replaceIn(file, '#   - ../../components/podmonitor', '  - ../../components/podmonitor')
      }
    })
    try {
      for (const overlay of OVERLAYS) {
        const resources = renderKustomization(join(dir, 'overlays', overlay))
        const monitors = resources.filter((r) => r.kind === 'PodMonitor')
        assert.equal(monitors.length, 1, overlay)
        const monitor = monitors[0] as Resource
        assert.equal(
          monitor.metadata.namespace,
          resources.find((r) => r.kind === 'Deployment')?.metadata.namespace,
          `${overlay}: the overlay's namespace`
        )
        assert.deepEqual([...resources.flatMap(schemaProblems), ...policyProblems(resources)], [], overlay)
        const endpoints = (
          monitor.spec as {
            podMetricsEndpoints: Array<{ port: string; relabelings?: Array<{ targetLabel?: string }> }>
          }
        ).podMetricsEndpoints
        assert.ok(
          endpoints.every(
            (e) => e.port === 'metrics' && (e.relabelings ?? []).some((r) => r.targetLabel === 'service')
          ),
          `${overlay}: every endpoint sets the dashboard's service label`
        )
      }
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })

  it('node-logs: a DaemonSet ships /var/log/containers as cri with its state on a hostPath, host logs read-only, non-root in group 0', () => {
    const resources = renderKustomization(join(K8S, 'overlays', 'node-logs'))
    const daemonSet = resources.find(
      (r) => r.kind === 'DaemonSet' && r.metadata.name === 'squeeze-node-logs'
    ) as Resource
    assert.ok(daemonSet !== undefined)
    const pod = podSpecOf(daemonSet) as JsonObject
    const [container] = containersOf(daemonSet)
    const args = (container?.args ?? []) as string[]
    assert.equal(args[args.indexOf('--file') + 1], 'cri:/var/log/containers/*.log')
    assert.ok(args.includes('--follow'))
    const stateDir = args[args.indexOf('--state-dir') + 1]
    const mounts = (container?.volumeMounts ?? []) as JsonObject[]
    const volumes = (pod.volumes ?? []) as JsonObject[]
    const hostPathOf = (name: unknown): unknown =>
      (volumes.find((v) => v.name === name)?.hostPath as JsonObject | undefined)?.path
    for (const mount of mounts) {
      if (mount.mountPath === stateDir)
        assert.equal(hostPathOf(mount.name), stateDir, 'the state directory is on the node')
      else assert.equal(mount.readOnly, true, `${String(mount.mountPath)} is mounted read-only`)
    }
    assert.ok(mounts.some((m) => m.mountPath === stateDir))
    assert.equal((pod.securityContext as JsonObject).runAsNonRoot, true)
    // containerd writes container logs root:root 0640: uid 1000 reads them through group 0 only.
    assert.deepEqual((pod.securityContext as JsonObject).supplementalGroups, [0])
    assert.equal(
      args[args.indexOf('--host-name') + 1],
      '$(NODE_NAME)',
      'state and transactional id follow the node, not the pod'
    )
    const producer = resources.find(
      (r) => r.kind === 'Deployment' && r.metadata.name === 'squeeze-producer'
    ) as Resource
    assert.equal((producer.spec as JsonObject).replicas, 0, 'the generating producer is off')
  })

  it('local-kafka: squeeze and a one-node KRaft StatefulSet it bootstraps from, restricted Pod Security in both namespaces', () => {
    const resources = renderKustomization(join(K8S, 'overlays', 'local-kafka'))
    const namespaces = resources.filter((r) => r.kind === 'Namespace')
    assert.deepEqual(namespaces.map((n) => n.metadata.name).sort(), ['kafka', 'squeeze'])
    for (const n of namespaces) assert.equal(labelsOf(n)['pod-security.kubernetes.io/enforce'], 'restricted')
    const kafka = resources.find((r) => r.kind === 'StatefulSet' && r.metadata.name === 'kafka') as Resource
    assert.equal(kafka.metadata.namespace, 'kafka')
    assert.equal((kafka.spec as JsonObject).replicas, 1)
    const env = new Map(((containersOf(kafka)[0]?.env ?? []) as JsonObject[]).map((e) => [String(e.name), e] as const))
    assert.deepEqual(env.get('POD_IP')?.valueFrom, { fieldRef: { fieldPath: 'status.podIP' } })
    assert.equal(env.get('KAFKA_ADVERTISED_LISTENERS')?.value, 'INTERNAL://$(POD_IP):9092', 'no DNS name to resolve')
    const claims = (kafka.spec as JsonObject).volumeClaimTemplates as JsonObject[]
    assert.equal(claims.length, 1, 'the log directory outlives the pod')
    // What the restricted standard asks of every container, squeeze's and Kafka's.
    for (const workload of resources.filter((r) => r.kind === 'Deployment' || r.kind === 'StatefulSet')) {
      const pod = podSpecOf(workload) as JsonObject
      const podSecurity = pod.securityContext as JsonObject
      assert.equal(podSecurity.runAsNonRoot, true, workload.metadata.name)
      assert.deepEqual(podSecurity.seccompProfile, { type: 'RuntimeDefault' }, workload.metadata.name)
      for (const c of containersOf(workload)) {
        const sc = c.securityContext as JsonObject
        assert.equal(sc.allowPrivilegeEscalation, false, workload.metadata.name)
        assert.deepEqual((sc.capabilities as JsonObject).drop, ['ALL'], workload.metadata.name)
      }
    }
    const config = resources.find((r) => r.kind === 'ConfigMap' && r.metadata.name === 'squeeze-config') as Resource
    const data = config.data as JsonObject
    const bootstrap = resources.find((r) => r.kind === 'Service' && r.metadata.name === 'kafka-bootstrap') as Resource
    assert.equal(data.KAFKA_BROKERS, `kafka-bootstrap.${String(bootstrap.metadata.namespace)}.svc.cluster.local:9092`)
    assert.equal(data.KAFKA_SECURITY_PROTOCOL, 'PLAINTEXT')
  })

  it('the docs state the Strimzi range that accepts the pinned Kafka version', () => {
    const { from, through } = STRIMZI.supported
    const range = `Strimzi ${from} to ${through.split('.').slice(0, 2).join('.')}.x`
    for (const file of ['k8s/strimzi/kustomization.yaml', 'deploy/README.md'])
      assert.ok(
        readFileSync(join(ROOT, file), 'utf8').replace(/\s+/g, ' ').includes(range),
        `${file} does not state "${range}"`
      )
    // The range ends where Strimzi stops accepting the version: the next release rejects it.
    const kafka = renderKustomization(join(K8S, 'strimzi')).find((r) => r.kind === 'Kafka') as Resource
    const version = String(((kafka.spec as JsonObject).kafka as JsonObject).version)
    const after = Object.keys(STRIMZI.releases)
      .filter((r) => compareVersions(r, through) > 0)
      .sort(compareVersions)[0]
    assert.ok(
      after !== undefined && !(STRIMZI.releases[after]?.kafkaVersions ?? []).includes(version),
      `Strimzi ${String(after)} accepts Kafka ${version} too: widen the range`
    )
  })

  it('an autoscaled Deployment with spec.replicas, a consumer without a group, ignored Strimzi annotations or an unsupported Kafka version fail', () => {
    const dir = editedCopy((k8s) => {
      replaceIn(join(k8s, 'base/copier.yaml'), 'revisionHistoryLimit: 3', 'replicas: 2\n  revisionHistoryLimit: 3')
      replaceIn(join(k8s, 'base/consumer.yaml'), /^ {12}- --group\n {12}- .*\n/m, '')
      replaceIn(
        join(k8s, 'strimzi/kafka.yaml'),
        '  name: squeeze\n',
        '  name: squeeze\n  annotations:\n    strimzi.io/kraft: enabled\n    strimzi.io/node-pools: enabled\n'
      )
      replaceIn(join(k8s, 'strimzi/kafka.yaml'), /version: .*/, 'version: 4.2.0')
    })
    try {
      const problems = validateTree(dir)
      assert.ok(
        problems.includes(
          'overlay prod: StatefulSet/squeeze-copier: sets spec.replicas, which HorizontalPodAutoscaler/squeeze-copier manages'
        ),
        problems.join('\n')
      )
      assert.ok(
        problems.includes(
          'overlay dev: Deployment/squeeze-consumer: consume without --group (every replica would read every partition)'
        ),
        problems.join('\n')
      )
      assert.ok(
        problems.includes('overlay dev: Kafka/squeeze: annotation strimzi.io/kraft is ignored since Strimzi 0.48.0'),
        problems.join('\n')
      )
      assert.ok(
        problems.includes(
          'overlay prod: Kafka/squeeze: annotation strimzi.io/node-pools is ignored since Strimzi 0.48.0'
        ),
        problems.join('\n')
      )
      assert.ok(
        problems.some((p) => p.startsWith('overlay prod: Kafka/squeeze: Strimzi 0.49.0 does not support Kafka 4.2.0')),
        problems.join('\n')
      )
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })

  it('a copier run as a Deployment fails: a replaced pod would come back under a new transactional id', () => {
    const dir = editedCopy((k8s) => {
      replaceIn(join(k8s, 'base/copier.yaml'), 'kind: StatefulSet', 'kind: Deployment')
      replaceIn(join(k8s, 'base/copier.yaml'), /^ {2}serviceName: .*\n {2}(#.*\n {2})?podManagementPolicy: .*\n/m, '')
      replaceIn(join(k8s, 'base/autoscalers.yaml'), 'kind: StatefulSet', 'kind: Deployment')
      replaceIn(join(k8s, 'overlays/dev/kustomization.yaml'), 'kind: StatefulSet', 'kind: Deployment')
      replaceIn(join(k8s, 'overlays/prod/kustomization.yaml'), /^ {2}# The copier is a StatefulSet.*\n(.*\n){4}/m, '')
    })
    try {
      const problems = validateTree(dir)
      assert.ok(
        problems.includes(
          'overlay prod: StatefulSet squeeze-copier is missing (the copier needs stable pod names for its transactional ids)'
        ),
        problems.join('\n')
      )
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })

  it('a Deployment with a wrong field type fails validation', () => {
    const dir = editedCopy((k8s) =>
      replaceIn(join(k8s, 'base/producer.yaml'), 'containerPort: 9464', 'containerPort: metrics-port')
    )
    try {
      const problems = validateTree(dir)
      assert.ok(
        problems.some((p) => /producer\.yaml: Deployment\/squeeze-producer: .*containerPort must be integer/.test(p)),
        problems.join('\n')
      )
      assert.ok(
        problems.some((p) => p.startsWith('overlay prod: Deployment/squeeze-producer')),
        problems.join('\n')
      )
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })

  it('a container without an image fails validation', () => {
    const dir = editedCopy((k8s) => replaceIn(join(k8s, 'base/consumer.yaml'), /^ {10}image: .*\n/m, ''))
    try {
      const problems = validateTree(dir)
      assert.ok(
        problems.includes('overlay dev: Deployment/squeeze-consumer container consumer: no image'),
        problems.join('\n')
      )
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })

  it('a Strimzi resource with an invalid value or an unknown field fails validation', () => {
    const dir = editedCopy((k8s) => {
      replaceIn(join(k8s, 'strimzi/kafka.yaml'), 'type: internal', 'type: internel')
      replaceIn(join(k8s, 'strimzi/user.yaml'), 'type: scram-sha-512', 'type: scram-sha-512\n    mechanism: SCRAM')
      replaceIn(join(k8s, 'strimzi/node-pools.yaml'), 'replicas: 3', 'replicas: "3"')
    })
    try {
      const problems = validateTree(dir)
      assert.ok(
        problems.some((p) =>
          /kafka\.yaml: Kafka\/squeeze: \/spec\/kafka\/listeners\/0\/type must be equal to one of the allowed values/.test(
            p
          )
        ),
        problems.join('\n')
      )
      assert.ok(
        problems.some((p) =>
          /user\.yaml: KafkaUser\/squeeze: \/spec\/authentication must NOT have additional properties/.test(p)
        ),
        problems.join('\n')
      )
      assert.ok(
        problems.some((p) => /node-pools\.yaml: KafkaNodePool\/controller: \/spec\/replicas must be integer/.test(p)),
        problems.join('\n')
      )
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })

  it('a grace period shorter than the shutdown flush, or a consumer reading other topics than the copier writes, fails', () => {
    const dir = editedCopy((k8s) => {
      replaceIn(join(k8s, 'base/copier.yaml'), 'terminationGracePeriodSeconds: 70', 'terminationGracePeriodSeconds: 50')
      replaceIn(join(k8s, 'base/configmap.yaml'), 'COPY_TARGETS: none,', 'COPY_TARGETS: zstd:19,none,')
    })
    try {
      const problems = validateTree(dir)
      assert.ok(
        problems.some((p) =>
          p.includes('StatefulSet/squeeze-copier: terminationGracePeriodSeconds 50 does not exceed')
        ),
        problems.join('\n')
      )
      assert.ok(
        problems.some((p) => p.includes('DESTINATION_TOPICS')),
        problems.join('\n')
      )
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })
})

describe('Kubernetes NetworkPolicy', () => {
  it('prod and existing-cluster limit the pods to metrics from the monitoring namespace and egress to the brokers and DNS; dev has none', () => {
    for (const overlay of OVERLAYS) {
      const resources = renderKustomization(join(K8S, 'overlays', overlay))
      const policies = resources.filter((r) => r.kind === 'NetworkPolicy')
      assert.equal(policies.length, overlay === 'dev' ? 0 : 1, overlay)
      assert.deepEqual([...resources.flatMap(schemaProblems), ...policyProblems(resources)], [], overlay)
    }
    const existing = renderKustomization(join(K8S, 'overlays', 'existing-cluster')).find(
      (r) => r.kind === 'NetworkPolicy'
    ) as Resource
    const [brokers] = (existing.spec as { egress: Array<{ to: JsonObject[] }> }).egress
    assert.deepEqual(
      brokers?.to,
      [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kafka' } } }],
      "the existing cluster's namespace"
    )
  })

  it("a policy open to every namespace, without DNS, or without the brokers' port fails", () => {
    const dir = editedCopy((k8s) => {
      const file = join(k8s, 'components/network-policy/network-policy.yaml')
      replaceIn(file, 'kubernetes.io/metadata.name: monitoring', 'team: anyone')
      replaceIn(file, / {8}- port: 9093\n {10}protocol: TCP\n/, '')
      replaceIn(file, / {8}- port: 53\n {10}protocol: UDP\n/, '')
    })
    try {
      const problems = policyProblems(renderKustomization(join(dir, 'overlays', 'prod')))
      for (const expected of [
        'only from the monitoring namespace',
        'does not allow DNS',
        "does not allow the brokers' port 9093"
      ]) {
        assert.ok(
          problems.some((p) => p.includes(expected)),
          `${expected}:\n${problems.join('\n')}`
        )
      }
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true })
    }
  })
})
