import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

/**
 * Where the benchmark-only peers live: bench/.peers (git-ignored), installed by scripts/bench.sh, never
 * by package.json. Each loader says why a peer is missing.
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
  Producer: new (
    conf: Record<string, string | number | boolean>,
    topicConf?: Record<string, string | number | boolean>
  ) => RdkafkaProducer
  CODES: { ERRORS: Record<string, number> }
  librdkafkaVersion: string
}

export function loadConfluentKafkaJavascript(): RdkafkaModule {
  const main = join(PEERS_DIR, 'node_modules', '@confluentinc', 'kafka-javascript')
  if (!existsSync(main))
    throw new Error(
      `@confluentinc/kafka-javascript is not installed in ${PEERS_DIR}: run scripts/bench.sh (it builds it with CKJS_LINKING=dynamic)`
    )
  const require = createRequire(join(PEERS_DIR, 'package.json'))
  return require('@confluentinc/kafka-javascript') as RdkafkaModule
}

/** Peers that BENCH_SKIP names (comma-separated, e.g. `BENCH_SKIP=confluent`): left out of the run on purpose. */
export function benchSkips(env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> {
  return new Set(
    (env['BENCH_SKIP'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  )
}

/**
 * librdkafka's version in @confluentinc/kafka-javascript, or null when BENCH_SKIP names `confluent`. A peer that
 * is missing without being skipped fails the run: a table that silently lacks its rows reads as a complete one.
 */
export function confluentPeer(env: NodeJS.ProcessEnv = process.env): string | null {
  if (benchSkips(env).has('confluent')) return null
  try {
    return loadConfluentKafkaJavascript().librdkafkaVersion
  } catch (e) {
    throw new Error(
      `@confluentinc/kafka-javascript cannot be loaded (${e instanceof Error ? e.message : String(e)}); set BENCH_SKIP=confluent to run without its rows`,
      { cause: e }
    )
  }
}
