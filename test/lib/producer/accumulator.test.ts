import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, type SqueezeError } from '../../../lib/errors.js'
import { createLogger } from '../../../lib/log/logger.js'
import { RecordAccumulator, type ProducerRecord } from '../../../lib/producer/accumulator.js'
import { DEFAULT_PRODUCER_CONFIG, TopicCodecs, type ProducerConfig } from '../../../lib/producer/config.js'
import { partitionForKey } from '../../../lib/producer/partitioner.js'
import { FakeCluster, until } from '../../helpers/fake-cluster.js'

const log = createLogger({ level: 'silent', name: 'test' })

function newAccumulator(overrides: Partial<ProducerConfig>, topics: Record<string, number> = { t: 4 }) {
  const config: ProducerConfig = {
    ...DEFAULT_PRODUCER_CONFIG,
    codec: { codec: 'none', level: null },
    compressionThreads: 0,
    lingerMs: 60_000,
    ...overrides
  }
  const events = { ready: 0, sealFailures: [] as SqueezeError[] }
  const accumulator = new RecordAccumulator(
    config,
    { cluster: new FakeCluster({ topics }), log },
    new TopicCodecs(config),
    {
      batchReady: () => events.ready++,
      sealFailed: (_queue, _batch, error) => events.sealFailures.push(error)
    }
  )
  return { accumulator, events }
}

function record(value: string, partition?: number): ProducerRecord {
  return { topic: 't', key: null, value: Buffer.from(value), ...(partition === undefined ? {} : { partition }) }
}

async function add(accumulator: RecordAccumulator, r: ProducerRecord): Promise<boolean> {
  const queue = accumulator.queueFor(r) ?? (await accumulator.queueAfterMetadata(r))
  return accumulator.append(queue, r, 1_700_000_000_000)
}

describe('record accumulator', () => {
  it('closes a batch at batch.size, and a sealed batch holds only its own size of buffer.memory', async () => {
    const { accumulator, events } = newAccumulator({ batchSizeBytes: 1024 })
    let appended = 0
    while (events.ready === 0) {
      assert.equal(await add(accumulator, record(`line ${appended}`, 0)), true)
      appended++
    }
    const [queue] = accumulator.queues
    assert.equal(queue!.queue.length, 1)
    const sealed = queue!.queue[0]!.sealed!
    // The record that did not fit opened the next batch.
    const inNext = queue!.open?.recordCount ?? 0
    assert.equal(sealed.recordCount + inNext, appended)
    assert.ok(sealed.uncompressedBytes <= 1024)
    assert.ok(sealed.uncompressedBytes > 900)
    assert.equal(accumulator.reservedBytes, sealed.bytes.length + (inNext > 0 ? 1024 : 0))
    assert.equal(accumulator.recordsAccepted, appended)
    await accumulator.close()
  })

  it('closes a batch when linger.ms passes', async () => {
    const { accumulator, events } = newAccumulator({ lingerMs: 5 })
    await add(accumulator, record('a', 1))
    await until(() => events.ready === 1, 'the lingering batch to close')
    assert.equal(accumulator.queues[0]!.queue[0]!.records, 1)
    await accumulator.close()
  })

  it('refuses to open a batch beyond buffer.memory until memory is released, then takes the waiting record', async () => {
    const { accumulator } = newAccumulator({ batchSizeBytes: 1024, bufferMemoryBytes: 2048 })
    assert.equal(await add(accumulator, record('a', 0)), true)
    assert.equal(await add(accumulator, record('b', 1)), true)
    assert.equal(accumulator.reservedBytes, 2048)
    const waiting = record('c', 2)
    const queue = accumulator.queueFor(waiting)!
    assert.equal(accumulator.append(queue, waiting, 0), false)
    let accepted = false
    const appended = accumulator.appendWhenMemoryFrees(queue, waiting, 0).then(() => (accepted = true))
    accumulator.closeAll()
    await appended
    assert.equal(accepted, true)
    assert.equal(accumulator.recordsAccepted, 3)
    assert.equal(accumulator.isEmpty(), false)
    await accumulator.close()
  })

  it("puts keyed records where Kafka's partitioner does, rejects a partition that does not exist, and loads a topic's metadata once", async () => {
    const { accumulator } = newAccumulator({})
    const keyed: ProducerRecord = { topic: 't', key: Buffer.from('user-42'), value: Buffer.from('x') }
    assert.equal(accumulator.queueFor(keyed), undefined, 'no metadata yet')
    const queue = await accumulator.queueAfterMetadata(keyed)
    assert.equal(queue.partition, partitionForKey(Buffer.from('user-42'), 4))
    assert.equal(accumulator.queueFor(keyed), queue)
    assert.throws(() => accumulator.queueFor(record('x', 4)), { code: ErrorCodes.CONFIG_INVALID })
    await assert.rejects(accumulator.queueAfterMetadata({ topic: 'missing', key: null, value: null }), {
      code: ErrorCodes.PRODUCE_FAILED,
      message: /does not exist/
    })
    await accumulator.close()
  })

  it('keeps keyless records on one partition until its batch closes', async () => {
    const { accumulator } = newAccumulator({ batchSizeBytes: 256 })
    const first = await accumulator.queueAfterMetadata(record('a'))
    for (let i = 0; accumulator.queueFor(record('a')) === first; i++)
      accumulator.append(first, record(`record ${i}`), 0)
    assert.equal(first.queue.length, 1, 'the partition moved on when its batch closed')
    await accumulator.close()
  })
})
