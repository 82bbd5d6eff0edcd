import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import { parseAllDocuments } from 'yaml'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet'
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor'

/** The repository root (tests run from dist/test/deploy). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }
export interface Resource extends JsonObject {
  apiVersion: string
  kind: string
  metadata: JsonObject & { name: string }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Every YAML document of a file; a syntax error names the file and line. */
export function loadYamlDocuments(file: string): Json[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true, merge: true })
  return docs.flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`)
    const value = doc.toJS() as Json
    return value === null || value === undefined ? [] : [value]
  })
}

export function loadYaml(file: string): Json {
  const docs = loadYamlDocuments(file)
  if (docs.length !== 1) throw new Error(`${file}: expected one YAML document, found ${docs.length}`)
  return docs[0] as Json
}

/** Every *.yaml/*.yml under a folder (recursive), sorted. */
export function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) return yamlFilesUnder(path)
      return /\.ya?ml$/.test(name) ? [path] : []
    })
}

// ---------------------------------------------------------------------------------------------------------
// A small kustomize: resources (files and folders), components, namespace, labels, images and JSON 6902
// patches with a target (kind, name, labelSelector). Anything else in a kustomization.yaml is an error, so a
// feature the renderer does not implement can never be skipped silently. As in kustomize, a component's
// resources join the including kustomization's and its patches see all of them; the including
// kustomization's own patches, images, labels and namespace then apply to the lot.

const KUSTOMIZATION_KEYS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'components',
  'namespace',
  'labels',
  'images',
  'patches'
])
const COMPONENT_KEYS = new Set(['apiVersion', 'kind', 'resources', 'patches'])

export function renderKustomization(dir: string): Resource[] {
  const file = join(dir, 'kustomization.yaml')
  const k = loadKustomization(file, 'kustomize.config.k8s.io/v1beta1', 'Kustomization', KUSTOMIZATION_KEYS)
  const resources = loadResources(k, dir, file)
  for (const entry of asArray(k.components, `${file} components`)) {
    if (typeof entry !== 'string') throw new Error(`${file}: components entries must be paths`)
    applyComponent(resources, resolve(dir, entry), file)
  }
  for (const patch of asArray(k.patches, `${file} patches`)) applyPatch(resources, patch, file)
  for (const image of asArray(k.images, `${file} images`)) applyImage(resources, image, file)
  for (const label of asArray(k.labels, `${file} labels`)) {
    if (!isObject(label) || !isObject(label.pairs)) throw new Error(`${file}: labels entries need pairs`)
    for (const r of resources)
      r.metadata.labels = { ...(isObject(r.metadata.labels) ? r.metadata.labels : {}), ...label.pairs }
  }
  if (typeof k.namespace === 'string') for (const r of resources) r.metadata.namespace = k.namespace
  return resources
}

function applyComponent(resources: Resource[], dir: string, includedBy: string): void {
  const file = join(dir, 'kustomization.yaml')
  if (!existsSync(file)) throw new Error(`${includedBy}: component ${dir} has no kustomization.yaml`)
  const c = loadKustomization(file, 'kustomize.config.k8s.io/v1alpha1', 'Component', COMPONENT_KEYS)
  resources.push(...loadResources(c, dir, file))
  for (const patch of asArray(c.patches, `${file} patches`)) applyPatch(resources, patch, file)
}

function loadKustomization(file: string, apiVersion: string, kind: string, keys: Set<string>): JsonObject {
  const k = loadYaml(file)
  if (!isObject(k) || k.kind !== kind || k.apiVersion !== apiVersion)
    throw new Error(`${file}: not a ${kind} (${apiVersion})`)
  for (const key of Object.keys(k)) if (!keys.has(key)) throw new Error(`${file}: unsupported ${kind} field ${key}`)
  return k
}

function loadResources(k: JsonObject, dir: string, file: string): Resource[] {
  const resources: Resource[] = []
  for (const entry of asArray(k.resources, `${file} resources`)) {
    if (typeof entry !== 'string') throw new Error(`${file}: resources entries must be paths`)
    const path = resolve(dir, entry)
    if (!existsSync(path)) throw new Error(`${file}: resource ${entry} does not exist`)
    if (statSync(path).isDirectory()) resources.push(...renderKustomization(path))
    else resources.push(...loadYamlDocuments(path).map((doc) => asResource(doc, path)))
  }
  return resources
}

function asArray(value: Json | undefined, what: string): Json[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new Error(`${what}: expected a list`)
  return value
}

function asResource(doc: Json, file: string): Resource {
  if (
    !isObject(doc) ||
    typeof doc.apiVersion !== 'string' ||
    typeof doc.kind !== 'string' ||
    !isObject(doc.metadata) ||
    typeof doc.metadata.name !== 'string'
  ) {
    throw new Error(`${file}: a document lacks apiVersion, kind or metadata.name`)
  }
  return doc as Resource
}

export function labelsOf(r: Resource): JsonObject {
  return isObject(r.metadata.labels) ? r.metadata.labels : {}
}

function matchesTarget(r: Resource, target: JsonObject): boolean {
  if (typeof target.kind === 'string' && target.kind !== r.kind) return false
  if (typeof target.name === 'string' && target.name !== r.metadata.name) return false
  if (typeof target.labelSelector === 'string') {
    for (const term of target.labelSelector.split(',')) {
      const [key, value] = term.split('=').map((s) => s.trim())
      if (key === undefined || labelsOf(r)[key] !== value) return false
    }
  }
  return true
}

function applyPatch(resources: Resource[], patch: Json, file: string): void {
  if (!isObject(patch) || !isObject(patch.target) || typeof patch.patch !== 'string')
    throw new Error(`${file}: patches need target and an inline JSON 6902 patch`)
  const ops = loadYamlText(patch.patch, file)
  const targets = resources.filter((r) => matchesTarget(r, patch.target as JsonObject))
  if (targets.length === 0) throw new Error(`${file}: patch target ${JSON.stringify(patch.target)} matches no resource`)
  for (const r of targets) for (const op of ops) applyOperation(r, op, `${file} (${r.kind}/${r.metadata.name})`)
}

function loadYamlText(text: string, file: string): JsonObject[] {
  const docs = parseAllDocuments(text)
  const value = docs[0]?.toJS() as Json
  if (!Array.isArray(value) || !value.every(isObject))
    throw new Error(`${file}: a JSON 6902 patch is a list of operations`)
  return value as JsonObject[]
}

function applyOperation(doc: JsonObject, op: JsonObject, where: string): void {
  if (typeof op.path !== 'string' || !op.path.startsWith('/')) throw new Error(`${where}: bad patch path`)
  const keys = op.path
    .slice(1)
    .split('/')
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'))
  const last = keys.pop() as string
  let parent: Json = doc
  for (const key of keys) {
    const next: Json | undefined = Array.isArray(parent)
      ? parent[Number(key)]
      : isObject(parent)
        ? parent[key]
        : undefined
    if (next === undefined) throw new Error(`${where}: ${op.op} ${op.path}: ${key} does not exist`)
    parent = next
  }
  const value = op.value as Json
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last)
    if (!Number.isInteger(index) || index < 0 || index > parent.length)
      throw new Error(`${where}: ${op.path}: bad index`)
    if (op.op === 'add') parent.splice(index, 0, value)
    else if (op.op === 'replace' && index < parent.length) parent[index] = value
    else if (op.op === 'remove' && index < parent.length) parent.splice(index, 1)
    else throw new Error(`${where}: ${op.op} ${op.path} not applicable`)
    return
  }
  if (!isObject(parent)) throw new Error(`${where}: ${op.path}: parent is not an object`)
  if (op.op === 'add') parent[last] = value
  else if ((op.op === 'replace' || op.op === 'remove') && !(last in parent))
    throw new Error(`${where}: ${op.op} ${op.path}: ${last} does not exist`)
  else if (op.op === 'replace') parent[last] = value
  else if (op.op === 'remove') delete parent[last]
  else throw new Error(`${where}: unsupported op ${String(op.op)}`)
}

function applyImage(resources: Resource[], image: Json, file: string): void {
  if (!isObject(image) || typeof image.name !== 'string') throw new Error(`${file}: images entries need a name`)
  for (const container of resources.flatMap(containersOf)) {
    const current = String(container.image ?? '')
    const name = current.replace(/[:@][^/]*$/, '')
    if (name !== image.name) continue
    const tag = current.slice(name.length)
    container.image = `${typeof image.newName === 'string' ? image.newName : name}${typeof image.newTag === 'string' ? `:${image.newTag}` : tag}`
  }
}

export function podSpecOf(r: Resource): JsonObject | undefined {
  const spec = r.spec
  if (!isObject(spec) || !isObject(spec.template) || !isObject(spec.template.spec)) return undefined
  return spec.template.spec
}

export function containersOf(r: Resource): JsonObject[] {
  const pod = podSpecOf(r)
  return pod !== undefined && Array.isArray(pod.containers) ? pod.containers.filter(isObject) : []
}

// ---------------------------------------------------------------------------------------------------------
// Schema validation: Kubernetes kinds through kubernetes-models (generated from the Kubernetes OpenAPI
// definitions) and @kubernetes-models/prometheus-operator; Strimzi kinds against the pinned subset of the
// Strimzi CRD schemas in schema/k8s/strimzi-v1.schema.json.

interface Validatable {
  validate(): void
}
type ModelClass = new (data: never) => Validatable

const KUBERNETES_MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap as unknown as ModelClass,
  'v1/Secret': Secret as unknown as ModelClass,
  'v1/Service': Service as unknown as ModelClass,
  'v1/Namespace': Namespace as unknown as ModelClass,
  'apps/v1/Deployment': Deployment as unknown as ModelClass,
  'apps/v1/StatefulSet': StatefulSet as unknown as ModelClass,
  'apps/v1/DaemonSet': DaemonSet as unknown as ModelClass,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler as unknown as ModelClass,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as unknown as ModelClass,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy as unknown as ModelClass,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor as unknown as ModelClass,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor as unknown as ModelClass
}

let strimziValidators: Map<string, ValidateFunction> | undefined

function strimziValidator(kind: string): ValidateFunction | undefined {
  if (strimziValidators === undefined) {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schema/k8s/strimzi-v1.schema.json'), 'utf8')) as {
      definitions: Record<string, object>
    }
    const ajv = new Ajv({ allErrors: true, strict: true })
    ajv.addSchema(schema, 'strimzi')
    strimziValidators = new Map(
      Object.keys(schema.definitions).map((k) => [k, ajv.getSchema(`strimzi#/definitions/${k}`) as ValidateFunction])
    )
  }
  return strimziValidators.get(kind)
}

/** Schema problems of one resource; an apiVersion/kind without a known schema is a problem too. */
export function schemaProblems(r: Resource): string[] {
  const id = `${r.kind}/${r.metadata.name}`
  if (r.apiVersion === 'kafka.strimzi.io/v1') {
    const validate = strimziValidator(r.kind)
    if (validate === undefined) return [`${id}: no pinned schema for Strimzi kind ${r.kind}`]
    return validate(r)
      ? []
      : (validate.errors ?? []).map(
          (e) =>
            `${id}: ${e.instancePath || '/'} ${e.message ?? ''} ${e.params === undefined ? '' : JSON.stringify(e.params)}`
        )
  }
  const Model = KUBERNETES_MODELS[`${r.apiVersion}/${r.kind}`]
  if (Model === undefined) return [`${id}: no schema for ${r.apiVersion} ${r.kind}`]
  try {
    new Model(r as never).validate()
    return []
  } catch (err) {
    return [`${id}: ${err instanceof Error ? err.message : String(err)}`]
  }
}

// ---------------------------------------------------------------------------------------------------------
// Compose: the Compose specification's JSON schema as shipped by dclint (docker-compose-linter).

let composeValidator: ValidateFunction | undefined

export function composeSchemaProblems(doc: Json): string[] {
  if (composeValidator === undefined) {
    const schemaFile = join(ROOT, 'node_modules/dclint/schemas/compose.schema.json')
    // The file declares draft-07 as "https://json-schema.org/draft-07/schema", a spelling ajv does not know.
    const { $schema, ...schema } = JSON.parse(readFileSync(schemaFile, 'utf8')) as { $schema?: string }
    if ($schema === undefined || !$schema.includes('draft-07'))
      throw new Error(`${schemaFile}: expected a draft-07 schema, got ${String($schema)}`)
    composeValidator = new Ajv({ allErrors: true, strict: false }).compile(schema)
  }
  return composeValidator(doc)
    ? []
    : (composeValidator.errors ?? []).map(
        (e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`
      )
}

// ---------------------------------------------------------------------------------------------------------
// The Grafana dashboard: every query of every panel (rows nest panels).

export const DASHBOARD = join(ROOT, 'deploy/grafana/dashboards/squeeze.json')

export interface DashboardPanel {
  type: string
  title: string
  targets?: Array<{ expr: string }>
  panels?: DashboardPanel[]
}

export function dashboardPanels(file = DASHBOARD): DashboardPanel[] {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels: DashboardPanel[] }
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])])
}

/** Every query with its panel's title; a panel (other than a row or text) without a query is an error. */
export function dashboardQueries(panels = dashboardPanels()): Array<{ panel: string; expr: string }> {
  for (const p of panels)
    if (p.type !== 'row' && p.type !== 'text' && (p.targets ?? []).length === 0)
      throw new Error(`panel "${p.title}" has no query`)
  return panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })))
}
