import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

/**
 * Where the benchmark-only peers live: bench/.peers (git-ignored), installed by scripts/bench.sh, never
 * by package.json. Each loader says why a peer is missing instead of failing the whole run.
 */
export const PEERS_DIR = process.env['BENCH_PEERS_DIR'] ?? new URL('../../../bench/.peers', import.meta.url).pathname

export interface RdkafkaProducer {
  connect(opts: object, cb: (err: unknown) => void): void
  produce(topic: string, partition: number | null, value: Buffer, key?: Buffer | null): boolean
  poll(): void
  setPollInterval(ms: number): void
  flush(timeoutMs: number, cb: (err: unknown) => void): void
  disconnect(cb: (err: unknown) => void): void
  on(event: string, cb: (...args: unknown[]) => void): void
}

export interface RdkafkaModule {
  Producer: new (conf: Record<string, string | number | boolean>, topicConf?: Record<string, string | number | boolean>) => RdkafkaProducer
  CODES: { ERRORS: Record<string, number> }
  librdkafkaVersion: string
}

export function loadConfluentKafkaJavascript(): RdkafkaModule {
  const main = join(PEERS_DIR, 'node_modules', '@confluentinc', 'kafka-javascript')
  if (!existsSync(main)) throw new Error(`@confluentinc/kafka-javascript is not installed in ${PEERS_DIR}: run scripts/bench.sh (it builds it with CKJS_LINKING=dynamic)`)
  const require = createRequire(join(PEERS_DIR, 'package.json'))
  return require('@confluentinc/kafka-javascript') as RdkafkaModule
}

export function confluentAvailable(): string | null {
  try {
    return loadConfluentKafkaJavascript().librdkafkaVersion
  } catch {
    return null
  }
}
