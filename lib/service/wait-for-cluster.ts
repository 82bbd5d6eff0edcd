import { ErrorCodes, SqueezeError, errorCode, errorMessage } from '../errors.js'
import type { Logger } from '../log/logger.js'
import { retry } from '../retry.js'
import type { Readiness } from './endpoints.js'

/** What a waiting service says it is waiting for: refused credentials or TLS are not "Kafka not ready". */
function waitingFor(err: unknown): string {
  const code = errorCode(err)
  if (code === ErrorCodes.AUTH_FAILED) return 'authentication failed'
  if (code === ErrorCodes.TLS_HANDSHAKE) return 'TLS handshake failed'
  if (code === ErrorCodes.TOPIC_REFUSED) return 'topic creation refused'
  return 'Kafka not ready yet'
}

/**
 * Runs a start-up step (connect, find the topics) and, while `waitMs` allows, retries it with backoff when it
 * fails, so a service started before its cluster waits (readyz 503) instead of exiting into a restart loop.
 * Refused credentials are retried too (a Kubernetes secret can lag the user it belongs to), but the log and
 * the readiness reason say so. With `waitMs` 0 the first failure is final: the right thing for a command a
 * person typed. Shutdown (`signal`) ends a wait at once with the last failure.
 */
export async function untilClusterReady<T>(
  step: () => Promise<T>,
  options: { waitMs: number; log: Logger; signal?: AbortSignal; readiness?: Readiness; random?: () => number }
): Promise<T> {
  const result = await retry(step, {
    deadlineMs: options.waitMs,
    initialDelayMs: 500,
    maxDelayMs: 10_000,
    // A wrong setting does not fix itself by waiting.
    shouldRetry: (err) => !(err instanceof SqueezeError && err.code === ErrorCodes.CONFIG_INVALID),
    onRetry: (err, attempt, delayMs) => {
      const what = waitingFor(err)
      if (options.readiness !== undefined) options.readiness.reason = `${what} (${errorCode(err)})`
      options.log.warn(
        { attempt, retryInMs: Math.round(delayMs), code: errorCode(err), reason: errorMessage(err) },
        `${what}; waiting (--wait-for-brokers-s)`
      )
    },
    signal: options.signal,
    random: options.random
  })
  if (options.readiness !== undefined) delete options.readiness.reason
  return result
}
