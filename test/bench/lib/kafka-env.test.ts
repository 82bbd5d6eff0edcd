import assert from 'node:assert/strict'
import { it } from 'node:test'
import { openBenchKafka } from '../../../bench/lib/kafka-env.js'
import { BATCH } from '../../../lib/protocol/batch-layout.js'
import { startTestKafka } from '../../helpers/kafka.js'

it("recordSections gives back each batch a producer sealed, decompressed: the same-batches ceiling's input", async (t) => {
  const kafka = await startTestKafka()
  t.after(() => kafka.stop())
  // The bench's own handle on the test's broker (KAFKA_BROKERS), so no second broker starts.
  process.env['KAFKA_BROKERS'] = kafka.broker.brokers.join(',')
  const bench = await openBenchKafka()
  t.after(() => bench.close())
  const topic = await kafka.createTopic(t, { partitions: 1 })
  const producer = await kafka.startProducer({ codec: { codec: 'zstd', level: 3 }, batchSizeBytes: 16 * 1024 })
  const values = Array.from({ length: 600 }, (_, i) => Buffer.from(`line ${i} ${'x'.repeat(i % 97)}`))
  await producer.sendMany(values.map((value) => ({ topic, key: null, value })))
  await producer.flush()
  const shape = await bench.batchShape(topic)
  const sections = await bench.recordSections(topic)
  assert.ok(shape.batches > 1, 'the values fill several batches')
  assert.equal(sections.length, shape.batches)
  assert.equal(
    sections.reduce((n, s) => n + s.count, 0),
    values.length
  )
  // Uncompressed, in order: every value is in the section of its batch, and the sections hold the batches' bytes.
  const all = Buffer.concat(sections.map((s) => s.records))
  let at = 0
  for (const value of values) {
    at = all.indexOf(value, at)
    assert.ok(at >= 0, `value ${value.toString().slice(0, 12)} is in a section`)
  }
  assert.equal(all.length + sections.length * BATCH.HEADER_BYTES, shape.uncompressedBytes)
})
