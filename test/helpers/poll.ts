import assert from 'node:assert/strict'

export interface PollOptions {
  /** Appended to the timeout message: what the test can say about the system it waited on (logs, stderr). */
  describeState?: () => string | Promise<string>
  /** Pause between probes (default 200 ms); longer for probes that spawn a process. */
  intervalMs?: number
}

/**
 * Probes until `done` holds; fails after `timeoutMs` with `what`, the last value seen and the described state.
 * A probe that throws fails the wait at once: probes throw for what no waiting fixes (a service that exited).
 */
export async function poll<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
  options: PollOptions = {}
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value)) return value
    if (Date.now() > deadline) {
      const state = options.describeState === undefined ? '' : `\n${await options.describeState()}`
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(value)}${state}`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200))
  }
}
