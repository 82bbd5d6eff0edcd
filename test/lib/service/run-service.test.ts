import assert from 'node:assert/strict'
import { it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { runOneShot, runService } from '../../../lib/service/run-service.js'
import { freePort } from '../../helpers/ports.js'

const connection = { brokers: ['127.0.0.1:1'] }

async function readyz(port: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/readyz`)).status
}

it('the skeleton serves /readyz 503 until start-up is done, then follows the health check, and closes the endpoints after', async () => {
  const port = await freePort()
  const seen: number[] = []
  let healthy = true
  const code = await runService({
    name: 'squeeze-test',
    service: { logLevel: 'silent', metricsPort: port, metricsHost: '127.0.0.1', waitForBrokersMs: 0 },
    configure: () => ({ connection, shutdownTimeoutMs: 1000 }),
    start: async ({ ready }) => {
      seen.push(await readyz(port))
      ready(() => healthy)
      seen.push(await readyz(port))
      healthy = false
      seen.push(await readyz(port))
      return 7
    }
  })
  assert.equal(code, 7)
  assert.deepEqual(seen, [503, 200, 503])
  await assert.rejects(fetch(`http://127.0.0.1:${port}/readyz`))
})

it('a setting refused by configure ends the run before any endpoint listens or anything starts', async () => {
  const port = await freePort()
  let started = false
  await assert.rejects(
    runService({
      name: 'squeeze-test',
      service: { logLevel: 'silent', metricsPort: port, metricsHost: '127.0.0.1', waitForBrokersMs: 0 },
      configure: () => {
        throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--bad is bad')
      },
      start: async () => {
        started = true
        return 0
      }
    }),
    (err: unknown) => err instanceof SqueezeError && err.code === ErrorCodes.CONFIG_INVALID
  )
  assert.equal(started, false)
  await assert.rejects(fetch(`http://127.0.0.1:${port}/readyz`))
})

it('a failed connect attempt is classified against the configured brokers (unreachable, retriable)', async () => {
  await assert.rejects(
    runService({
      name: 'squeeze-test',
      service: { logLevel: 'silent', metricsPort: undefined, metricsHost: '127.0.0.1', waitForBrokersMs: 0 },
      configure: () => ({ connection, shutdownTimeoutMs: 1000 }),
      start: async ({ waitForCluster, connect }) =>
        waitForCluster(() => connect(Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1'))))
    }),
    (err: unknown) =>
      err instanceof SqueezeError &&
      err.code === ErrorCodes.BROKER_UNREACHABLE &&
      err.message.includes('at 127.0.0.1:1') &&
      err.retriable
  )
})

it('a one-shot command classifies a connect failure against the brokers it learned while running, and installs no signal handler unless asked', async () => {
  const handlers = process.listenerCount('SIGINT')
  await assert.rejects(
    runOneShot({
      name: 'squeeze-test',
      service: { logLevel: 'silent', metricsPort: undefined, metricsHost: '127.0.0.1', waitForBrokersMs: 0 },
      configure: () => ({}),
      start: async ({ connect, signal }) => {
        assert.equal(process.listenerCount('SIGINT'), handlers)
        assert.equal(signal.aborted, false)
        return connect(Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:2')), { brokers: ['127.0.0.1:2'] })
      }
    }),
    (err: unknown) =>
      err instanceof SqueezeError &&
      err.code === ErrorCodes.BROKER_UNREACHABLE &&
      err.message.includes('at 127.0.0.1:2')
  )
})
