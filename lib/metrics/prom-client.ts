import { createRequire } from 'node:module'
import type * as PromClient from 'prom-client'

/**
 * The parts of prom-client squeeze uses, each from its own module. prom-client's index loads them all, with its
 * Pushgateway (node:http and node:https), its cluster aggregator and the default metrics (which load
 * @opentelemetry/api, 50 modules): 0.15 CPU s of every service's start-up, most of it for parts a service never
 * uses. The classes are the very ones the index exports (Node caches a module by its file).
 */
const require = createRequire(import.meta.url)

export const Registry = require('prom-client/lib/registry') as typeof PromClient.Registry
export const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter
export const Gauge = require('prom-client/lib/gauge') as typeof PromClient.Gauge
export const Histogram = require('prom-client/lib/histogram') as typeof PromClient.Histogram
export type Registry = PromClient.Registry
export type Counter<T extends string = string> = PromClient.Counter<T>
export type Gauge<T extends string = string> = PromClient.Gauge<T>
export type Histogram<T extends string = string> = PromClient.Histogram<T>

/** Node's process metrics (CPU, memory, event loop lag, GC); loaded on first use. */
export function collectDefaultMetrics(config: Parameters<typeof PromClient.collectDefaultMetrics>[0]): void {
  ;(require('prom-client/lib/defaultMetrics') as typeof PromClient.collectDefaultMetrics)(config)
}
