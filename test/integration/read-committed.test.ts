import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { startTestKafka, type TestKafka } from '../helpers/kafka.js'

let kafka: TestKafka
before(async () => {
  kafka = await startTestKafka()
})
after(async () => {
  await kafka?.stop()
})

async function values(topic: string, isolation: 'read_committed' | 'read_uncommitted'): Promise<string[]> {
  const batches = await kafka.readAll([topic], { isolation })
  return batches.filter(({ batch }) => !batch.isControl).flatMap(({ batch }) => batch.records.map((r) => r.value?.toString() ?? '<null>'))
}

describe('read_committed', () => {
  it('one producer aborts, aborts again, then commits within one fetch: only the committed records are read', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    const producer = new Producer({ ...DEFAULT_PRODUCER_CONFIG, codec: parseCodecSpec('none'), lingerMs: 5 }, { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log, transactionalId: `tx-${topic}` })
    await producer.start()
    t.after(() => producer.close())
    // One producer id throughout, as a copier restarted with --exactly-once keeps it: two aborts of one producer.
    for (const [label, outcome] of [['aborted-1', 'abort'], ['aborted-2', 'abort'], ['committed', 'commit']] as const) {
      producer.beginTransaction()
      for (let i = 0; i < 3; i++) await producer.send({ topic, partition: 0, key: null, value: Buffer.from(`${label}-${i}`) })
      if (outcome === 'abort') await producer.abortTransaction()
      else await producer.commitTransaction()
    }

    // The log holds all nine records and three markers, a few hundred bytes: one fetch answer lists both aborts.
    assert.deepEqual(await values(topic, 'read_uncommitted'), ['aborted-1', 'aborted-2', 'committed'].flatMap((l) => [0, 1, 2].map((i) => `${l}-${i}`)))
    assert.deepEqual(await values(topic, 'read_committed'), ['committed-0', 'committed-1', 'committed-2'])
  })
})
