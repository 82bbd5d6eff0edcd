import assert from 'node:assert/strict'
import { freePort, freePortOutsideEphemeralRange } from '../helpers/ports.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { it } from 'node:test'
import { startKraftBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { createCluster, createKafkaClient, DEFAULT_CONNECTION } from '../../lib/kafka/connection.js'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

async function readyz(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).status
  } catch {
    return 0
  }
}

it(
  'a service started before its cluster waits with readyz 503 (--wait-for-brokers-s), then does its job once Kafka is up',
  { timeout: 180_000 },
  async (t) => {
    // Bound only once Kafka is up, seconds from now: a port no outgoing connection can take meanwhile.
    const bootstrapPort = await freePortOutsideEphemeralRange()
    const metricsPort = await freePort()
    const child = spawn(
      process.execPath,
      [
        CLI,
        'consume',
        '--brokers',
        `127.0.0.1:${bootstrapPort}`,
        '--topic',
        'late',
        '--format',
        'none',
        '--metrics-port',
        String(metricsPort),
        '--wait-for-brokers-s',
        '120',
        '--log-level',
        'warn'
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' } }
    )
    t.after(() => child.kill('SIGKILL'))
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))

    // No broker yet: alive, not ready, and saying that it waits.
    let status = 0
    for (
      let i = 0;
      i < 100 && (status === 0 || !/Kafka not ready yet; waiting/.test(stderr)) && child.exitCode === null;
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      status = await readyz(metricsPort)
    }
    assert.equal(status, 503)
    assert.match(stderr, /Kafka not ready yet; waiting/)

    // Kafka starts elsewhere and gets the topic and its records; only then does the address the consumer waits on
    // answer (a proxy to the broker), so what it reads can be nothing but the 100 records.
    const broker = await startKraftBroker()
    t.after(() => broker.stop())
    const log = createLogger({ level: 'silent' })
    const connection = { ...DEFAULT_CONNECTION, brokers: [broker.bootstrap] }
    const admin = createKafkaClient(connection, log).admin()
    await admin.connect()
    await createTopicsAndWait(admin, [{ topic: 'late', numPartitions: 1 }])
    await admin.disconnect()
    const producer = new Producer(
      { ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'zstd', level: 3 } },
      { cluster: createCluster(connection, log), log }
    )
    await producer.start()
    for (let i = 0; i < 100; i++) await producer.send({ topic: 'late', key: null, value: Buffer.from(`r${i}`) })
    await producer.close()
    assert.equal(child.exitCode, null, `the consumer must keep waiting, not exit: ${stderr}`)
    const proxy = await startTcpProxy(bootstrapPort)
    t.after(() => proxy.close())
    proxy.setTarget(Number(broker.bootstrap.split(':').pop()))

    assert.equal(await exited, 0, stderr)
    assert.match(stdout, /^late\s+none\s+zstd\s+100\s/m)
  }
)
