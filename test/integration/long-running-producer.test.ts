/**
 * A producer that runs for weeks: generated --rate traffic keeps to the clock (a fake one runs days here), and a
 * refusal no retry fixes shows in a metric and on /readyz instead of only in a log line.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import kafkajs from 'kafkajs'
import { produceLogs } from '../../lib/pipeline/produce-logs.js'
import { generateRecords } from '../../lib/sources/generator-source.js'
import { fakeClock } from '../helpers/fake-clock.js'
import { useTestKafka } from '../helpers/kafka.js'
import { freePort } from '../helpers/ports.js'
import { poll } from '../helpers/poll.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const DAY_MS = 86_400_000

const kafka = useTestKafka()

async function get(url: string): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(url)
    return { status: res.status, body: await res.text() }
  } catch {
    return { status: 0, body: '' }
  }
}

describe('a long-running producer', () => {
  it('three simulated days of --rate traffic, then 500 records/s: no batch refused by a topic allowing 60 s of skew, every partition fed', async (t) => {
    const topic = await kafka.createTopic(t, {
      partitions: 6,
      configs: { 'message.timestamp.after.max.ms': '60000', 'message.timestamp.before.max.ms': String(4 * DAY_MS) }
    })
    const producer = await kafka.startProducer({ lingerMs: 20 })
    const started = Date.now()
    // Ends about a minute before the broker's clock: three days at one record per 10 s, then 20 s at 500/s.
    const clock = fakeClock(started - 3 * DAY_MS - 60_000)
    const phases = [
      { seed: 1, records: 25_920, ratePerSecond: 0.1 },
      { seed: 2, records: 10_000, ratePerSecond: 500 }
    ]
    for (const phase of phases) {
      await produceLogs({
        source: generateRecords({ kind: 'http', clock, ...phase }),
        format: null,
        topic,
        producer,
        onParseError: 'skip',
        log: kafka.log
      })
    }
    await producer.flush()
    assert.equal(producer.snapshot().recordsFailed, 0, 'no batch was refused')
    const read = await kafka.readAll([topic])
    const perPartition = new Array<number>(6).fill(0)
    let count = 0
    for (const { partition, batch } of read) {
      for (const record of batch.records) {
        perPartition[partition]!++
        count++
        assert.ok(
          record.timestamp >= started - 3 * DAY_MS - 60_000 && record.timestamp <= Date.now(),
          `timestamp ${new Date(record.timestamp).toISOString()}`
        )
      }
    }
    assert.equal(count, 35_920)
    for (const n of perPartition)
      assert.ok(Math.abs(n / (count / 6) - 1) < 0.15, `records per partition: ${perPartition.join(', ')}`)
  })

  it('a batch refused for good (INVALID_TIMESTAMP) counts in a metric and turns /readyz 503, until batches get through again', async (t) => {
    // before.max.ms 0: every record is older than that when its batch arrives, so every batch is refused.
    const topic = await kafka.createTopic(t, { configs: { 'message.timestamp.before.max.ms': '0' } })
    const port = await freePort()
    const child = spawn(
      process.execPath,
      [
        CLI,
        'produce',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--topic',
        topic,
        '--kind',
        'syslog',
        '--records',
        '10000000',
        '--rate',
        '200',
        '--metrics-port',
        String(port),
        '--log-level',
        'silent',
        '-X',
        'linger.ms=200'
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' } }
    )
    t.after(() => child.kill('SIGKILL'))
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    const counter = new RegExp(
      `^squeeze_produce_unrecoverable_errors_total\\{topic="${topic}",error="INVALID_TIMESTAMP"\\} (\\d+)`,
      'm'
    )

    const metrics = await poll(
      'the unrecoverable-error counter',
      () => get(`http://127.0.0.1:${port}/metrics`),
      (r) => Number(counter.exec(r.body)?.[1] ?? 0) > 0
    )
    assert.match(metrics.body, /^squeeze_producer_delivery_blocked 1$/m)
    assert.equal((await get(`http://127.0.0.1:${port}/readyz`)).status, 503)
    assert.equal((await get(`http://127.0.0.1:${port}/healthz`)).status, 200, 'alive: restarting would not help')
    assert.equal(child.exitCode, null, stderr)

    // Someone fixes the topic: the next batches are acknowledged and the service is ready again.
    await kafka.admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: kafkajs.ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: [{ name: 'message.timestamp.before.max.ms', value: String(DAY_MS) }]
        }
      ]
    })
    await poll(
      '/readyz 200',
      () => get(`http://127.0.0.1:${port}/readyz`),
      (r) => r.status === 200
    )
    assert.match((await get(`http://127.0.0.1:${port}/metrics`)).body, /^squeeze_producer_delivery_blocked 0$/m)
    child.kill('SIGINT')
    assert.equal(await exited, 1, 'records were lost, so the run fails')
  })
})
