import { collectDefaultMetrics, Counter, Registry } from './prom-client.js'

/** A fresh registry per service (and per test), with Node's process metrics under the squeeze_ prefix. */
export function createRegistry(options: { defaultMetrics?: boolean; labels?: Record<string, string> } = {}): Registry {
  const registry = new Registry()
  if (options.labels !== undefined) registry.setDefaultLabels(options.labels)
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'squeeze_' })
  return registry
}

/**
 * Counters over one label set, one per figure a component reports per batch (records, bytes, CPU seconds):
 * the returned function adds each figure to its counter.
 */
export function figureCounters<F extends string, L extends string>(
  registry: Registry,
  labelNames: readonly L[],
  counters: Readonly<Record<F, { name: string; help: string }>>
): (labels: Readonly<Record<L, string>>, figures: Readonly<Record<F, number>>) => void {
  const made = Object.entries<{ name: string; help: string }>(counters).map(
    ([figure, { name, help }]) => [figure as F, new Counter({ name, help, labelNames, registers: [registry] })] as const
  )
  return (labels, figures) => {
    for (const [figure, counter] of made) counter.inc(labels, figures[figure])
  }
}
