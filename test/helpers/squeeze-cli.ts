import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

export interface SqueezeRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the built `squeeze` CLI as a child process and resolves with its exit code and output (never rejects).
 * KAFKA_BROKERS is cleared so only the flags choose the cluster; `env` adds or overrides variables.
 */
export function runSqueeze(args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<SqueezeRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, KAFKA_BROKERS: '', ...options.env }, timeout: options.timeoutMs ?? 240_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}
