import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { ErrorCodes } from '../../lib/errors.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { DEFAULT_PRODUCER_CONFIG, Producer, type DeliveryFailure } from '../../lib/producer/producer.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { compressionThrottle, SLOW_COMPRESSION_WORKER } from '../helpers/slow-compression-worker.js'

const PARTITIONS = 2

const kafka = useTestKafka()

/** Sends 25 records every 5 ms, alternating partitions, until stopped; `sent[p]` are partition p's values in order. */
function feed(producer: Producer, topic: string): { sent: string[][]; stop(): Promise<void> } {
  const sent: string[][] = Array.from({ length: PARTITIONS }, () => [])
  let stopped = false
  let n = 0
  const feeding = (async () => {
    while (!stopped) {
      await producer.sendMany(
        Array.from({ length: 25 }, () => {
          const partition = n % PARTITIONS
          const value = `record ${n} 10.0.${n % 7}.${n % 250} "GET /api/v1/items/${(n * 7919) % 10_000} HTTP/1.1" 200 ${300 + ((n * 104729) % 9000)}`
          sent[partition]?.push(value)
          n++
          return { topic, partition, key: null, value: Buffer.from(value), timestamp: RECENT_MS + n }
        })
      )
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  return {
    sent,
    stop: async () => {
      stopped = true
      await feeding
    }
  }
}

describe('compression threads that die mid-run (zstd:adaptive, squeeze.compression.threads=2)', () => {
  it('every accepted record is acknowledged or reported failed with one typed error, and the topic holds exactly the acknowledged ones', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: PARTITIONS })
    const threads = compressionThrottle()
    t.after(() => threads.close())
    // 64 KiB batches, above the size sealed on the event loop, so while a thread lives every batch goes to one.
    const producer = new Producer(
      {
        ...DEFAULT_PRODUCER_CONFIG,
        codec: parseCodecSpec('zstd:adaptive'),
        compressionThreads: 2,
        lingerMs: 200,
        batchSizeBytes: 64 * 1024
      },
      {
        cluster: createCluster(kafka.connection, kafka.log),
        log: kafka.log,
        compressionWorkerUrl: SLOW_COMPRESSION_WORKER
      }
    )
    t.after(() => producer.close())
    const failures: DeliveryFailure[] = []
    producer.onDeliveryFailure((f) => failures.push(f))
    await producer.start()
    const { sent, stop } = feed(producer, topic)
    try {
      const acked = async (): Promise<number> => producer.snapshot().recordsAcked
      await poll('records acknowledged through the compression threads', acked, (n) => n >= 2000)
      threads.kill()
      await poll(
        'both compression threads to have died',
        async () => producer.compressionLoad().threads.map((x) => x.alive),
        (alive) => alive.length === 2 && !alive.includes(true)
      )
      const ackedAtDeath = await acked()
      await poll(
        'records acknowledged after the deaths, compressed on the event loop',
        acked,
        (n) => n >= ackedAtDeath + 2000
      )
    } finally {
      await stop()
    }
    await producer.flush()

    const stats = producer.snapshot()
    const accepted = sent.reduce((sum, values) => sum + values.length, 0)
    assert.equal(stats.recordsAccepted, accepted)
    assert.equal(stats.recordsAcked + stats.recordsFailed, accepted, 'every accepted record acknowledged or failed')
    assert.ok(failures.length >= 2, `each thread died holding a batch: ${failures.length} failures`)
    assert.equal(
      failures.reduce((sum, f) => sum + f.records, 0),
      stats.recordsFailed
    )
    for (const f of failures) {
      assert.equal(f.error.code, ErrorCodes.PRODUCE_FAILED)
      assert.match(
        f.error.message,
        /^cannot compress a batch of \d+ records for .+-\d: compression thread [12] of 2 exited with code 3$/
      )
    }
    const stored: string[][] = Array.from({ length: PARTITIONS }, () => [])
    for (const { partition, batch } of await kafka.readAll([topic]))
      stored[partition]?.push(...batch.records.map((r) => r.value?.toString() ?? ''))
    for (let p = 0; p < PARTITIONS; p++) {
      const lost = failures
        .filter((f) => f.partition === p)
        .map((f) => ({ from: f.firstRecordIndex, to: f.firstRecordIndex + f.records }))
      const expected = (sent[p] ?? []).filter((_, i) => !lost.some((l) => i >= l.from && i < l.to))
      assert.deepEqual(
        stored[p],
        expected,
        `partition ${p}: the acknowledged records, in order, none of the failed ones`
      )
    }
  })
})
