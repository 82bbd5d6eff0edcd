import assert from 'node:assert/strict'
import { it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import type { Logger } from '../../../lib/log/logger.js'
import type { Readiness } from '../../../lib/service/endpoints.js'
import { untilClusterReady } from '../../../lib/service/wait-for-cluster.js'

function recordingLog(lines: Array<{ obj: Record<string, unknown>; msg: string }>): Logger {
  return { warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }) } as unknown as Logger
}

it('while waiting, the log and the readiness reason name what failed (TLS, credentials, unreachable); success clears the reason', async () => {
  const failures = [
    new SqueezeError(ErrorCodes.TLS_HANDSHAKE, 'TLS handshake at h:1 failed: self-signed certificate'),
    new SqueezeError(ErrorCodes.AUTH_FAILED, 'authentication failed for user u (SASL PLAIN) at h:1'),
    new SqueezeError(ErrorCodes.BROKER_UNREACHABLE, 'cannot reach any Kafka broker at h:1', { retriable: true })
  ]
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = []
  const readiness: Readiness = { ready: false }
  const reasons: Array<string | undefined> = []
  let calls = 0
  const result = await untilClusterReady(
    async () => {
      reasons.push(readiness.reason)
      const failure = failures[calls++]
      if (failure !== undefined) throw failure
      return 'connected'
    },
    { waitMs: 60_000, log: recordingLog(lines), readiness }
  )
  assert.equal(result, 'connected')
  assert.deepEqual(
    lines.map((l) => l.msg),
    [
      'TLS handshake failed; waiting (--wait-for-brokers-s)',
      'authentication failed; waiting (--wait-for-brokers-s)',
      'Kafka not ready yet; waiting (--wait-for-brokers-s)'
    ]
  )
  assert.deepEqual(
    lines.map((l) => l.obj.code),
    [ErrorCodes.TLS_HANDSHAKE, ErrorCodes.AUTH_FAILED, ErrorCodes.BROKER_UNREACHABLE]
  )
  assert.deepEqual(reasons, [
    undefined,
    'TLS handshake failed (SQUEEZE_ERR_TLS_HANDSHAKE)',
    'authentication failed (SQUEEZE_ERR_AUTH_FAILED)',
    'Kafka not ready yet (SQUEEZE_ERR_BROKER_UNREACHABLE)'
  ])
  assert.equal(readiness.reason, undefined, 'cleared once the step succeeds')
})

it('without a wait, refused credentials are final at the first attempt', async () => {
  let calls = 0
  await assert.rejects(
    untilClusterReady(
      async () => {
        calls++
        throw new SqueezeError(ErrorCodes.AUTH_FAILED, 'authentication failed')
      },
      { waitMs: 0, log: recordingLog([]) }
    ),
    { code: ErrorCodes.AUTH_FAILED }
  )
  assert.equal(calls, 1)
})

it('shutdown ends the wait at once with the last failure, without another attempt; the delays carry the injected jitter', async () => {
  const controller = new AbortController()
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = []
  const log = {
    warn: (obj: Record<string, unknown>, msg: string) => {
      lines.push({ obj, msg })
      if (lines.length === 2) controller.abort()
    }
  } as unknown as Logger
  let calls = 0
  // Had the abort not ended the second wait, a third attempt would follow it.
  await assert.rejects(
    untilClusterReady(
      async () => {
        calls++
        throw new SqueezeError(ErrorCodes.BROKER_UNREACHABLE, `cannot reach any Kafka broker (try ${calls})`, {
          retriable: true
        })
      },
      { waitMs: 3_600_000, log, signal: controller.signal, random: () => 0 }
    ),
    { message: 'cannot reach any Kafka broker (try 2)' }
  )
  assert.equal(calls, 2)
  assert.deepEqual(
    lines.map((l) => l.obj.retryInMs),
    [400, 800]
  )
})
