import assert from 'node:assert/strict'
import { Agent, get } from 'node:http'
import { describe, it } from 'node:test'
import { Gauge, Registry } from 'prom-client'
import { startMetricsServer } from '../../../lib/metrics/http-server.js'

describe('metrics server', () => {
  it('close() ends a keep-alive connection that is serving a scrape when it is called', async () => {
    const registry = new Registry()
    let release: () => void = () => undefined
    let entered: () => void = () => undefined
    const collecting = new Promise<void>((resolve) => (entered = resolve))
    // A collect that waits for the test: the scrape is in flight while close() is called.
    new Gauge({
      name: 'test_slow_gauge', help: 'held open by the test', registers: [registry],
      async collect() {
        entered()
        await new Promise<void>((resolve) => (release = resolve))
        this.set(1)
      }
    })
    const server = await startMetricsServer(registry, { port: 0, host: '127.0.0.1' })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const response = new Promise<{ status: number | undefined; connection: string | undefined; body: string }>((resolve, reject) => {
      get({ host: '127.0.0.1', port: server.port, path: '/metrics', agent }, (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }))
      }).on('error', reject)
    })
    await collecting
    let closed = false
    const closing = server.close().then(() => (closed = true))
    assert.equal(closed, false, 'close() waits for the scrape in flight')
    release()
    const res = await response
    assert.equal(res.status, 200)
    assert.match(res.body, /test_slow_gauge 1/)
    assert.equal(res.connection, 'close', 'the answer written while closing ends its connection')
    // Before the fix this never resolved: the agent kept the socket alive and the server waited for it.
    await closing
    assert.equal(closed, true)
    agent.destroy()
  })
})
