import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isTransient } from '../../lib/errors.js'
import { retry } from '../../lib/retry.js'
import type { TestKafka } from './kafka.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

/** A numbered syslog line: its record is the line itself, so the topic says which lines arrived how often. */
export function logLine(file: string, n: number): string {
  return `Dec  4 11:16:33 host ${file}: line ${String(n).padStart(7, '0')}`
}

/** Appends lines `from` to `to` (exclusive) of `name` to `path`. */
export function appendLines(path: string, name: string, from: number, to: number): void {
  let text = ''
  for (let n = from; n < to; n++) text += `${logLine(name, n)}\n`
  appendFileSync(path, text)
}

export interface Shipper {
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  output(): string
}

/** `squeeze produce --source file` as a child process, with the flags given and syslog lines sent as they are. */
export function startShipper(kafka: Pick<TestKafka, 'broker'>, topic: string, args: readonly string[]): Shipper {
  const argv = [
    CLI,
    'produce',
    '--brokers',
    kafka.broker.brokers.join(','),
    '--topic',
    topic,
    '--source',
    'file',
    '--kind',
    'syslog',
    '--log-level',
    'info',
    '-X',
    'linger.ms=20',
    ...args
  ]
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, KAFKA_BROKERS: '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, exited, output: () => output }
}

/**
 * Records in the topic (all partitions), by high watermark: cheap enough to poll. A topic created a moment ago may
 * answer NOT_LEADER until its leader is known everywhere: asked again.
 */
export async function recordCount(kafka: TestKafka, topic: string): Promise<number> {
  const offsets = await retry(() => kafka.admin.fetchTopicOffsets(topic), {
    retries: 10,
    initialDelayMs: 50,
    maxDelayMs: 500,
    shouldRetry: isTransient
  })
  return offsets.reduce((sum, o) => sum + Number(o.high), 0)
}

/** Each value in the topic and how often it is there, as a read_committed reader sees them. */
export async function valueCounts(kafka: TestKafka, topic: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const { batch } of await kafka.readAll([topic], { isolation: 'read_committed' })) {
    for (const r of batch.records) {
      const value = r.value?.toString() ?? ''
      counts.set(value, (counts.get(value) ?? 0) + 1)
    }
  }
  return counts
}

/** The offset the state file holds for the one file shipped, or 0 before the first save. */
export function savedOffset(stateDir: string): number {
  if (!existsSync(stateDir)) return 0
  const name = readdirSync(stateDir).find((n) => n.endsWith('.json'))
  if (name === undefined) return 0
  const state = JSON.parse(readFileSync(join(stateDir, name), 'utf8')) as { files: Array<{ offset: number }> }
  return Math.max(0, ...state.files.map((f) => f.offset))
}
