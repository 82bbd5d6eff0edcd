import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { formatFor } from '../../../lib/formats/index.js'
import { produceLogs } from '../../../lib/pipeline/produce-logs.js'
import { readFileBatches } from '../../../lib/sources/file-source.js'
import { kindLines } from '../../helpers/corpus.js'
import { startTestKafka, type TestKafka } from '../../helpers/kafka.js'

let kafka: TestKafka
before(async () => {
  kafka = await startTestKafka()
})
after(async () => {
  await kafka?.stop()
})

describe('produceLogs from a file read in batches', () => {
  it('sends every good line in order; a bad line and a line too large mid-batch are counted and the rest go on', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-produce-logs-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const corpus = kindLines('syslog')
    const good = Array.from({ length: 3000 }, (_, i) => corpus[i % corpus.length] as string)
    const bad = 'not a syslog line'
    const tooLarge = `Jan  1 00:00:00 host tag: ${'x'.repeat(200_000)}`
    const lines = [...good.slice(0, 1500), bad, ...good.slice(1500, 2000), tooLarge, ...good.slice(2000)]
    const path = join(dir, 'app.log')
    // CRLF endings and no final newline: both are still whole lines.
    writeFileSync(path, lines.join('\r\n'))
    const topic = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ maxRequestSizeBytes: 100_000, lingerMs: 5 })
    t.after(() => producer.close())
    const summary = await produceLogs({ source: readFileBatches(path, { follow: false }), format: formatFor('syslog'), topic, producer, onParseError: 'skip', log: kafka.log })
    await producer.flush()
    assert.deepEqual(summary, { itemsRead: 3002, recordsSent: 3000, parseErrors: 1, sentRaw: 0, rejected: 1 })
    const values = (await kafka.readAll([topic])).flatMap(({ batch }) => batch.records.map((r) => r.value?.toString('utf8')))
    assert.deepEqual(values, good)
  })
})
