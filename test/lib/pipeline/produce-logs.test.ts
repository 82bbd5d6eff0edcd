import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { formatFor, type LogFormat } from '../../../lib/formats/index.js'
import { EARLY_RECORDS_BYTES, produceLogs } from '../../../lib/pipeline/produce-logs.js'
import { readFileBatches, readFileChunks } from '../../../lib/sources/file-source.js'
import type { LineChunk, SourceBatch } from '../../../lib/sources/source.js'
import { kindLines } from '../../helpers/corpus.js'
import { until } from '../../helpers/fake-cluster.js'
import { useTestKafka } from '../../helpers/kafka.js'

const kafka = useTestKafka()

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
    const summary = await produceLogs({
      source: readFileBatches(path, { follow: false }),
      format: formatFor('syslog'),
      topic,
      producer,
      onParseError: 'skip',
      log: kafka.log
    })
    await producer.flush()
    assert.deepEqual(summary, {
      itemsRead: 3002,
      recordsSent: 3000,
      parseErrors: 1,
      sentRaw: 0,
      rejected: 1,
      parseErrorExamples: [{ line: 1501, reason: summary.parseErrorExamples[0]?.reason, text: bad }]
    })
    const values = (await kafka.readAll([topic])).flatMap(({ batch }) =>
      batch.records.map((r) => r.value?.toString('utf8'))
    )
    assert.deepEqual(values, good)
  })

  /**
   * Corpus access lines with a bad line, a line whose bound is too large but whose record is not, and a line too
   * large, through produceLogs from `source(path)`; every record must be the bytes encodeLine makes.
   */
  async function produceAccessLog(
    t: TestContext,
    source: (path: string) => AsyncIterable<SourceBatch | LineChunk>,
    extra: readonly string[],
    newline: string,
    format: LogFormat = formatFor('http')
  ): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-produce-logs-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const parses = (line: string): boolean => {
      try {
        format.encodeLine(line)
        return true
      } catch {
        return false
      }
    }
    const good = [
      ...kindLines('http')
        .filter(parses)
        .slice(0, 6000 - extra.length),
      ...extra
    ]
    const accessLine = (path: string): string =>
      `127.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET ${path} HTTP/1.1" 200 7697 "-" "curl/8"`
    // Its bound (3 bytes per character) is over max.request.size, its record is not: it goes the slower way, and gets there.
    const boundTooLarge = accessLine(`/${'b'.repeat(40_000)}`)
    const tooLarge = accessLine(`/${'x'.repeat(120_000)}`)
    const bad = 'not an access line'
    const lines = [...good.slice(0, 2500), bad, boundTooLarge, ...good.slice(2500, 4000), tooLarge, ...good.slice(4000)]
    const path = join(dir, 'access.log')
    writeFileSync(path, `${lines.join(newline)}${newline}`)
    const topic = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ maxRequestSizeBytes: 100_000, lingerMs: 5, batchSizeBytes: 64 * 1024 })
    t.after(() => producer.close())
    const summary = await produceLogs({
      source: source(path),
      format,
      topic,
      producer,
      onParseError: 'raw',
      log: kafka.log
    })
    await producer.flush()
    const { parseErrorExamples, ...counts } = summary
    assert.deepEqual(counts, { itemsRead: 6003, recordsSent: 6002, parseErrors: 1, sentRaw: 1, rejected: 1 })
    assert.deepEqual(
      parseErrorExamples.map((e) => [e.line, e.text]),
      [[2501, bad]]
    )
    const expected = [...good.slice(0, 2500), bad, boundTooLarge, ...good.slice(2500)].map((line) =>
      line === bad ? Buffer.from(bad) : format.encodeLine(line)
    )
    const values = (await kafka.readAll([topic])).flatMap(({ batch }) => batch.records.map((r) => r.value))
    assert.equal(values.length, expected.length)
    values.forEach((value, i) => assert.ok(value?.equals(expected[i] as Buffer), `record ${i} differs`))
  }

  it('http lines are written straight into their batches: the bytes encodeLine makes, raw lines in place, a line too large counted', async (t) => {
    await produceAccessLog(t, (path) => readFileBatches(path, { follow: false }), [], '\n')
  })

  it("http lines read in place from the file's bytes (readFileChunks): the same records, non-ASCII and CRLF lines included", async (t) => {
    const nonAscii = '10.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET /caf\u00e9 HTTP/1.1" 200 12 "-" "na\u00efve/1.0"'
    await produceAccessLog(t, (path) => readFileChunks(path, { readSizeBytes: 8192 }), [nonAscii, nonAscii], '\r\n')
  })

  it('read in place one line at a time where the format has no pass of its own: the same records', async (t) => {
    const nonAscii = '10.0.0.1 - - [17/May/2015:10:05:03 +0000] "GET /caf\u00e9 HTTP/1.1" 200 12 "-" "na\u00efve/1.0"'
    const { linePass: _many, ...oneByOne } = formatFor('http')
    await produceAccessLog(t, (path) => readFileChunks(path, { readSizeBytes: 8192 }), [nonAscii], '\r\n', oneByOne)
  })

  it('with a producer still connecting, lines are read and parsed meanwhile, and sent in order once it is ready; a failed connect is the error', async (t) => {
    const good = kindLines('syslog').slice(0, 50)
    const topic = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ lingerMs: 5 })
    t.after(() => producer.close())
    let read = 0
    async function* source(): AsyncGenerator<SourceBatch> {
      for (const line of good) {
        read++
        yield [{ kind: 'line', line, bytes: Buffer.from(line) }]
      }
    }
    let connect = (): void => {}
    const ready = new Promise<void>((resolve) => {
      connect = resolve
    })
    const producing = produceLogs({
      source: source(),
      format: formatFor('syslog'),
      topic,
      producer,
      onParseError: 'skip',
      log: kafka.log,
      ready
    })
    await until(() => read === good.length, 'every line to be read while the producer connects')
    assert.equal(producer.snapshot().recordsAccepted, 0)
    connect()
    assert.equal((await producing).recordsSent, good.length)
    await producer.flush()
    const values = (await kafka.readAll([topic])).flatMap(({ batch }) =>
      batch.records.map((r) => r.value?.toString('utf8'))
    )
    assert.deepEqual(values, good)
    const refused = new Error('no broker answered')
    await assert.rejects(
      produceLogs({
        source: source(),
        format: formatFor('syslog'),
        topic,
        producer,
        onParseError: 'skip',
        log: kafka.log,
        ready: Promise.reject(refused)
      }),
      refused
    )
  })

  it('holds at most EARLY_RECORDS_BYTES of records while the producer connects: then reading waits for it', async (t) => {
    const topic = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ lingerMs: 5 })
    t.after(() => producer.close())
    const lineBytes = 32 * 1024
    const lines = (EARLY_RECORDS_BYTES / lineBytes) * 1.5
    let read = 0
    async function* source(): AsyncGenerator<SourceBatch> {
      for (let i = 0; i < lines; i++) {
        read++
        yield [{ kind: 'line', line: `${i} `.padEnd(lineBytes, 'x') }]
      }
    }
    let connect = (): void => {}
    const ready = new Promise<void>((resolve) => {
      connect = resolve
    })
    const producing = produceLogs({
      source: source(),
      format: null,
      topic,
      producer,
      onParseError: 'skip',
      log: kafka.log,
      ready
    })
    const held = EARLY_RECORDS_BYTES / lineBytes
    await until(() => read === held, 'the lines up to the bound to be read')
    await sleep(200)
    assert.equal(read, held, 'no line past the bound is read before the producer is ready')
    connect()
    assert.equal((await producing).recordsSent, lines)
    await producer.flush()
    const values = (await kafka.readAll([topic])).flatMap(({ batch }) =>
      batch.records.map((r) => r.value?.toString('utf8').split(' ')[0])
    )
    assert.deepEqual(
      values,
      Array.from({ length: lines }, (_, i) => String(i))
    )
  })
})
