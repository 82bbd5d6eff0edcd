import { execFile, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

export interface SqueezeRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the built `squeeze` CLI as a child process and resolves with its exit code and output (never rejects).
 * KAFKA_BROKERS is cleared so only the flags choose the cluster, and COLUMNS so reports are the width of a pipe's;
 * `env` adds or overrides variables.
 */
export function runSqueeze(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}
): Promise<SqueezeRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { ...process.env, KAFKA_BROKERS: '', COLUMNS: '', ...options.env },
        timeout: options.timeoutMs ?? 240_000,
        maxBuffer: 64 * 1024 * 1024
      },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
      }
    )
  })
}

/** A long-running `squeeze` child (consume --follow, ...) with its /metrics port. */
export interface SqueezeProcess {
  readonly metricsPort: number
  readonly exited: Promise<number | null>
  stderr(): string
  kill(signal: NodeJS.Signals): void
}

/** Starts the built CLI with `--metrics-port` on a free port; the caller stops it (kill) or waits for `exited`. */
export async function startSqueeze(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv } = {}
): Promise<SqueezeProcess> {
  const metricsPort = await freePort()
  const child = spawn(process.execPath, [CLI, ...args, '--metrics-port', String(metricsPort)], {
    env: { ...process.env, KAFKA_BROKERS: '', COLUMNS: '', ...options.env },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { metricsPort, exited, stderr: () => stderr, kill: (signal) => child.kill(signal) }
}
