import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { poll } from '../helpers/poll.js'
import { startBrokerBehindProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const log = createLogger({ level: 'silent' })
let proxy: TcpProxy
let stopBroker: (() => Promise<void>) | undefined

before(async () => {
  const started = await startBrokerBehindProxy()
  proxy = started.proxy
  stopBroker = started.stop
})
after(async () => {
  await stopBroker?.()
})

async function endOffset(topic: string): Promise<number> {
  const admin = createKafkaClient({ ...DEFAULT_CONNECTION, brokers: [`127.0.0.1:${proxy.port}`] }, log).admin()
  await admin.connect()
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0)
  } finally {
    await admin.disconnect()
  }
}

describe('squeeze produce on SIGTERM against a stalled broker', () => {
  it('reports every accepted record as acknowledged or failed before it exits', async () => {
    const topic = 'stalled-shutdown'
    const admin = createKafkaClient({ ...DEFAULT_CONNECTION, brokers: [`127.0.0.1:${proxy.port}`] }, log).admin()
    await admin.connect()
    await createTopicsAndWait(admin, [{ topic, numPartitions: 2 }])
    await admin.disconnect()
    const child = spawn(
      process.execPath,
      [
        CLI,
        'produce',
        '--brokers',
        `127.0.0.1:${proxy.port}`,
        '--topic',
        topic,
        '--rate',
        '2000',
        '--records',
        '10000000',
        '-X',
        'linger.ms=5',
        '-X',
        'request.timeout.ms=2000',
        '-X',
        'delivery.timeout.ms=3000',
        '-X',
        'retry.backoff.max.ms=200',
        '--log-level',
        process.env.SQUEEZE_TEST_LOG_LEVEL ?? 'silent'
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' }, stdio: ['ignore', 'pipe', 'pipe'] }
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      // A partition just created may not answer ListOffsets yet: that is 0 records so far, not a failure.
      const written = async (): Promise<number> => {
        if (child.exitCode !== null) throw new Error(`produce exited ${child.exitCode} before the stall:\n${stderr}`)
        return endOffset(topic).catch(() => 0)
      }
      await poll('records to reach the topic', written, (n) => n > 500)
      // A second of traffic acknowledged before the stall, so the exit has both outcomes to count.
      await new Promise((resolve) => setTimeout(resolve, 1000))
      // Records keep coming in while nothing gets through: requests are on the wire when the signal arrives.
      proxy.stall()
      await new Promise((resolve) => setTimeout(resolve, 700))
      child.kill('SIGTERM')
      const code = await exited
      const outcome = /accepted (\d+): (\d+) acknowledged, (\d+) failed(, (\d+) without an outcome yet)?/.exec(stdout)
      assert.ok(outcome !== null, `no outcome line; stdout:\n${stdout}\nstderr:\n${stderr}`)
      console.log(`# SIGTERM against a stalled broker: ${outcome[0]}, exit ${String(code)}`)
      const [accepted, acked, failed] = [outcome[1], outcome[2], outcome[3]].map(Number) as [number, number, number]
      assert.equal(outcome[4], undefined, 'no record is left without an outcome')
      assert.equal(acked + failed, accepted)
      assert.ok(failed > 0, 'the stalled requests failed, by count')
      assert.equal(code, 1, 'undelivered records make the exit non-zero')
      assert.doesNotMatch(stderr, /shutdown deadline/)
    } finally {
      child.kill('SIGKILL')
      proxy.heal()
    }
  })
})
