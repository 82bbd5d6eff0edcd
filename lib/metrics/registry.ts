import { collectDefaultMetrics, Registry } from 'prom-client'

/** A fresh registry per service (and per test), with Node's process metrics under the squeeze_ prefix. */
export function createRegistry(options: { defaultMetrics?: boolean; labels?: Record<string, string> } = {}): Registry {
  const registry = new Registry()
  if (options.labels !== undefined) registry.setDefaultLabels(options.labels)
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'squeeze_' })
  return registry
}
