import { ErrorCodes, errorMessage, SqueezeError } from '../errors.js'
import { unclassifiedConnectionFailure } from '../kafka/connect-failure.js'
import type { Logger } from '../log/logger.js'
import { outliveClosedOutput } from './closed-output.js'

/**
 * First SIGINT/SIGTERM/SIGHUP: abort intake so the service can flush and close, then exit 0. A second signal or
 * the shutdown deadline: exit 1 at once. Returns the signal every loop should watch.
 *
 * SIGHUP is what a closed terminal or ssh session sends: by default it kills Node at once, records accepted but not
 * yet sent with it. Node resets the signal to its default at start-up, so `nohup` does not shield it either; a
 * shipper meant to outlive its session runs under systemd, setsid or Kubernetes.
 */
export function installShutdown(
  log: Logger,
  options: { timeoutMs: number; outcome?: () => string | undefined }
): AbortSignal {
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      log.error({ signal }, 'second signal; exiting without waiting for the flush')
      process.exit(1)
    }
    log.info({ signal, timeoutMs: options.timeoutMs }, 'shutting down: no new input, flushing what was accepted')
    controller.abort()
    setTimeout(() => {
      const outcome = options.outcome?.()
      const { timeoutMs } = options
      log.error({ timeoutMs }, `shutdown took too long; exiting${outcome === undefined ? '' : ` (${outcome})`}`)
      if (outcome !== undefined) process.stderr.write(`squeeze: shutdown deadline ${timeoutMs} ms passed; ${outcome}\n`)
      process.exit(1)
    }, options.timeoutMs).unref()
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal)
  return controller.signal
}

/** Exit codes a script can tell apart: 2 bad arguments, 3 credentials refused, 4 TLS handshake failed, else 1. */
function exitCodeFor(err: SqueezeError): number {
  if (err.code === ErrorCodes.CONFIG_INVALID || err.code.startsWith('SQUEEZE_ERR_CODEC_')) return 2
  if (err.code === ErrorCodes.AUTH_FAILED) return 3
  if (err.code === ErrorCodes.TLS_HANDSHAKE) return 4
  return 1
}

/** How long the event loop idles before a finished command exits: V8's background compile jobs finish meanwhile. */
const IDLE_BEFORE_EXIT_MS = 50

/** Runs a command's main function: one clear line on stderr for an expected error, and its exitCodeFor. */
export async function runCommand(main: () => Promise<number>): Promise<void> {
  /**
   * Once the command is done, nothing is left to wait for: a client library's lingering timers or sockets, and
   * tearing down the heap and threads on a natural exit, must not hold the process. It exits once stdout and stderr
   * have handed on what was written (pipes may be asynchronous) and the event loop has idled for IDLE_BEFORE_EXIT_MS,
   * or after 2 s. The idle wait matters: process.exit() while a V8 background thread compiles can deadlock in the
   * platform's shutdown (the compile job waits for a garbage collection that only an idle main thread runs), and the
   * command then hangs after printing its report.
   */
  const exitSoon = (): void => {
    setTimeout(() => process.exit(), 2000).unref()
    const exitWhenIdle = (): void => {
      setTimeout(() => process.exit(), IDLE_BEFORE_EXIT_MS).unref()
    }
    // A stream whose reader has gone never drains.
    const pending = [process.stdout, process.stderr].filter((s) => s.writableLength > 0 && !s.destroyed)
    if (pending.length === 0) return exitWhenIdle()
    let left = pending.length
    for (const stream of pending) {
      stream.once('drain', () => {
        if (--left === 0) exitWhenIdle()
      })
    }
  }
  outliveClosedOutput()
  try {
    process.exitCode = await main()
  } catch (thrown) {
    const err = unclassifiedConnectionFailure(thrown) ?? thrown
    if (err instanceof SqueezeError) {
      process.stderr.write(`squeeze: ${err.message} [${err.code}]\n`)
      process.exitCode = exitCodeFor(err)
    } else {
      process.stderr.write(
        `squeeze: unexpected error: ${errorMessage(err)}\n${err instanceof Error ? (err.stack ?? '') : ''}\n`
      )
      process.exitCode = 1
    }
  } finally {
    exitSoon()
  }
}
